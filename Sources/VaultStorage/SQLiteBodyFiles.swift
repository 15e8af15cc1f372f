import Foundation

/// The directory beside an SQLite database that holds each stored version's body as a file of its own, named by the
/// version's row, so a load can be answered from the page cache with `sendfile` (issue 31).
///
/// A file is written and synced, and its directory entry synced (`syncEntries`), before the row naming it commits, so
/// no committed row names a file a crash could lose; it is never written again; it is removed after the commit that
/// deletes its row (a history trim or an erasure). Files no row names (a crash between the two steps, a refused or
/// failed save) are removed by `sweep` when the store opens, before it takes requests.
final class SQLiteBodyFiles: Sendable {
    /// The directory's path: the database's path with `.bodies` after it.
    let path: String
    /// The directory, open for `openat`, `unlinkat` and `fsync`.
    private let directory: Int32

    /// Opens (creating, owner-only) the body directory of the database at `databasePath`.
    ///
    /// - Throws: `StoreError` when the directory cannot be created or opened.
    init(databasePath: String) throws(StoreError) {
        path = databasePath + ".bodies"
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw StoreError(.unavailable, "cannot create the body directory \(path): \(String(cString: strerror(errno)))")
        }
        directory = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else {
            throw StoreError(.unavailable, "cannot open the body directory \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(directory)
    }

    /// Writes `body` to a new file and syncs its bytes; returns the file's name. Its directory entry is durable only
    /// after the next `syncEntries`.
    ///
    /// - Throws: `StoreError` when the file cannot be written in full or synced; nothing is then left behind.
    func write(_ body: Data) throws(StoreError) -> String {
        let name = Self.newName()
        let file = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw failure("create") }
        let written = body.withUnsafeBytes { bytes -> Bool in
            var done = 0
            while done < bytes.count {
                let count = Glibc.write(file, bytes.baseAddress! + done, bytes.count - done)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
        // fdatasync also syncs the size, which reading the bytes back needs.
        guard written, fdatasync(file) == 0 else {
            let error = failure("write")
            close(file)
            unlinkat(directory, name, 0)
            throw error
        }
        close(file)
        return name
    }

    /// Syncs the directory, so every file written before is found after a crash.
    ///
    /// - Throws: `StoreError` when the directory cannot be synced.
    func syncEntries() throws(StoreError) {
        guard fsync(directory) == 0 else { throw failure("sync") }
    }

    /// The body file `name`, open for reading, or nil when it is gone (a commit since the row was read deleted its
    /// version).
    ///
    /// - Throws: `StoreError` when it cannot be opened, or its size is not the `length` its row records.
    func open(_ name: String, length: Int) throws(StoreError) -> BlobFile? {
        let file = openat(directory, name, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else {
            if errno == ENOENT { return nil }
            throw failure("open")
        }
        var status = stat()
        guard fstat(file, &status) == 0, Int(status.st_size) == length else {
            close(file)
            throw StoreError(.corrupt, "a body file's size is not its row's")
        }
        return BlobFile(descriptor: file, offset: 0, length: length)
    }

    /// Removes the files `names` (a name already gone is no error).
    func remove(_ names: some Sequence<String>) {
        for name in names { unlinkat(directory, name, 0) }
    }

    /// Removes every file in the directory whose name is not in `named`: the files of saves that never committed and
    /// of versions whose removal a crash interrupted.
    ///
    /// - Throws: `StoreError` when the directory cannot be listed.
    func sweep(keeping named: Set<String>) throws(StoreError) {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: path) } catch {
            throw StoreError(.unavailable, "cannot list the body directory \(path)")
        }
        remove(names.filter { !named.contains($0) })
    }

    /// 128 random bits in hex: names that never repeat and say nothing of whose body a file holds.
    private static func newName() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return String(format: "%016llx%016llx", high, low)
    }

    private func failure(_ step: String) -> StoreError {
        StoreError(.unavailable, "cannot \(step) a body file in \(path): \(String(cString: strerror(errno)))")
    }
}
