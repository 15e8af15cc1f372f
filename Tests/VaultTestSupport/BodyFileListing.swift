import Foundation

/// What a body directory (`<database>.bodies`, a node's `body-cache`) holds on disk: its files sit in 256
/// subdirectories, and files of the layout before them in the directory itself.
public enum BodyFileListing {
    /// The paths of every file below `directory`, in its subdirectories or in itself.
    public static func paths(in directory: String) -> [String] {
        let files = FileManager.default
        return ((try? files.contentsOfDirectory(atPath: directory)) ?? []).flatMap { name -> [String] in
            let path = directory + "/" + name
            var isDirectory: ObjCBool = false
            guard files.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
            return ((try? files.contentsOfDirectory(atPath: path)) ?? []).map { path + "/" + $0 }
        }
    }

    /// The modification time, to the nanosecond, of `directory` and of each of its subdirectories, by path: a file
    /// made and removed again changes one of them.
    public static func modificationTimes(of directory: String) -> [String: [Int]] {
        let subdirectories = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).map { directory + "/" + $0 }
        var times: [String: [Int]] = [:]
        for path in [directory] + subdirectories {
            var status = stat()
            if stat(path, &status) == 0 { times[path] = [Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec)] }
        }
        return times
    }
}
