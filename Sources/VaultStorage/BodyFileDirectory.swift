import Foundation

/// A directory of stored bodies, one file each under a random name, so a load can be answered from the page cache
/// with `sendfile` (issue 31): the SQLite store's bodies beside its database, and a PostgreSQL node's cache of them.
///
/// The SQLite store writes and syncs a file, and its directory entry, before the row naming it commits, so no
/// committed row names a file a crash could lose; it is removed after the commit that deletes its row (a history trim
/// or an erasure), and files no row names (a crash between the two steps, a refused or failed save) are removed by
/// `sweep` when the store opens, before it takes requests. A file is never written again once named.
final class BodyFileDirectory: Sendable {
    /// The directory's path.
    let path: String
    /// The directory, open for `openat`, `unlinkat` and `fsync`.
    private let directory: Int32

    /// Opens the directory at `path`, creating it owner-only if it is missing.
    ///
    /// - Throws: `StoreError` when the directory cannot be created or opened.
    init(path: String) throws(StoreError) {
        self.path = path
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

    /// Writes `body` to a new file, not yet synced (`sync`); returns the file's name and its open descriptor.
    ///
    /// - Throws: `StoreError` when the file cannot be written in full; nothing is then left behind.
    func write(_ body: Data) throws(StoreError) -> (name: String, descriptor: Int32) {
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
        guard written else {
            let error = failure("write")
            close(file)
            unlinkat(directory, name, 0)
            throw error
        }
        return (name, file)
    }

    /// Syncs a file `write` made (its bytes and size) and closes it, then syncs the directory, so the file is found
    /// after a crash; a commit naming it must come after.
    ///
    /// Each save runs this on its own thread while it waits in the queue of the group commit, so it overlaps the
    /// commit ahead of it; once the file's sync has committed the file system's journal (ext4), the directory's finds
    /// little left to write. Syncing the directory once per batch, before its commit, put a second journal commit in
    /// every batch's path, and syncing each file before queueing put its sync in each save's: 990 and 1 113, then
    /// 1 273–1 555 saves/s, against 1 381–1 862 before body files (`scripts/bench_storage.sh`, paired,
    /// docs/PERFORMANCE.md).
    ///
    /// - Throws: `StoreError` when either sync fails.
    func sync(_ descriptor: Int32) throws(StoreError) {
        // fdatasync also syncs the size, which reading the bytes back needs.
        let synced = fdatasync(descriptor) == 0
        let error = synced ? nil : failure("sync")
        close(descriptor)
        if let error { throw error }
        guard fsync(directory) == 0 else { throw failure("sync the directory entry of") }
    }

    /// Syncs the directory, so removals before it are on disk (an erasure's).
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
