import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes files this tool creates: mode 0600 from the first byte, replaced atomically.
enum FileWriter {
    /// Writes `data` to `url` through a temporary file and a rename.
    ///
    /// - Throws: `CLIError` `.localStorage`.
    static func writeAtomically(_ data: Data, to url: URL) throws(CLIError) {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]),
            rename(temporary.path, url.path) == 0
        else {
            try? FileManager.default.removeItem(at: temporary)
            throw CLIError(.localStorage, "cannot write \(url.path): check the directory exists and is writable")
        }
    }

    /// Reads a whole file, or standard input for `-`.
    ///
    /// - Throws: `CLIError` `.usage` naming the file.
    static func read(_ path: String) throws(CLIError) -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.usage, "cannot read \(path): check the path and its permissions")
        }
        return data
    }
}
