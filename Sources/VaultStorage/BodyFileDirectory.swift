import Foundation

/// A directory of stored bodies, one file each under a random name, so a load can be answered from the page cache
/// with `sendfile` (issue 31): the SQLite store's bodies beside its database, and a PostgreSQL node's cache of them.
///
/// The SQLite store writes and syncs a file, and its directory entry, before the row naming it commits, so no
/// committed row names a file a crash could lose; it is removed after the commit that deletes its row (a history trim
/// or an erasure), and files no row names (a crash between the two steps, a refused or failed save) are removed by
/// `sweep` when the store opens, before it takes requests. A file is never written again once named.
///
/// Files live in 256 subdirectories named by the first two hex digits of their names. In one directory, every
/// creation and removal took that directory's lock while ext4 chose the new file's inode, and on a file system without
/// a journal that choice walks past every inode freed in the last minutes (`recently_deleted`), which history trims
/// free at the rate saves come: the lock and the walk were half of a save's CPU time and held SQLite saves to 0.73× their
/// anchor (docs/PERFORMANCE.md, "Save (D2, SQLite)"). The directory is also marked as the top of a hierarchy
/// (`FS_TOPDIR_FL`, `chattr +T`), so ext4's Orlov allocator spreads the subdirectories, and with them their files'
/// inodes, over its block groups; where the file system has no such flag the mark is skipped.
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
        Self.markAsTopOfHierarchy(directory)
        var created = false
        for shard in Self.shards {
            if mkdirat(directory, shard, 0o700) == 0 {
                created = true
            } else if errno != EEXIST {
                throw StoreError(.unavailable, "cannot create \(shard) in the body directory \(path): \(String(cString: strerror(errno)))")
            }
        }
        // The subdirectories must be on disk before a synced file in one is taken for durable.
        if created, fsync(directory) != 0 { throw failure("sync the subdirectories of") }
    }

    /// The subdirectories' names: `00` to `ff`.
    static let shards = (0..<256).map { String(format: "%02x", $0) }

    /// The subdirectory the file `name` sits in: its first two characters.
    static func shard(of name: String) -> String {
        String(name.prefix(2))
    }

    /// The path of the file `name` below the directory.
    static func relativePath(_ name: String) -> String {
        "\(shard(of: name))/\(name)"
    }

    // <linux/fs.h>: FS_IOC_GETFLAGS = _IOR('f', 1, long), FS_IOC_SETFLAGS = _IOW('f', 2, long), FS_TOPDIR_FL; the kernel
    // reads and writes an int through either (ioctl_iflags(2)).
    static let getFlagsRequest: UInt = 0x8008_6601
    static let setFlagsRequest: UInt = 0x4008_6602
    static let topDirectoryFlag: CInt = 0x0002_0000

    /// Sets ext4's top-directory flag; a file system that refuses it (not ext2/3/4, or no flags at all) is left as is.
    private static func markAsTopOfHierarchy(_ directory: Int32) {
        var flags: CInt = 0
        guard ioctl(directory, getFlagsRequest, &flags) == 0, flags & topDirectoryFlag == 0 else { return }
        flags |= topDirectoryFlag
        _ = ioctl(directory, setFlagsRequest, &flags)
    }

    deinit {
        close(directory)
    }

    /// Writes `body` to a new file, not yet synced (`sync`); returns the file's name and its open descriptor.
    ///
    /// - Throws: `StoreError` when the file cannot be written in full; nothing is then left behind.
    func write(_ body: Data) throws(StoreError) -> (name: String, descriptor: Int32) {
        let name = Self.newName()
        let file = openat(directory, Self.relativePath(name), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
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
            unlinkat(directory, Self.relativePath(name), 0)
            throw error
        }
        return (name, file)
    }

    /// Syncs a file `write` made (its bytes and size) and closes it, then syncs its subdirectory, so the file is found
    /// after a crash; a commit naming it must come after.
    ///
    /// Each save runs this on its own thread while it waits in the queue of the group commit, so it overlaps the
    /// commit ahead of it; once the file's sync has committed the file system's journal (ext4), the subdirectory's finds
    /// little left to write. Syncing the directory once per batch, before its commit, put a second journal commit in
    /// every batch's path, and syncing each file before queueing put its sync in each save's: 990 and 1 113, then
    /// 1 273–1 555 saves/s, against 1 381–1 862 before body files (`scripts/bench_storage.sh`, paired,
    /// docs/PERFORMANCE.md).
    ///
    /// - Throws: `StoreError` when either sync fails.
    func sync(_ descriptor: Int32, name: String) throws(StoreError) {
        // fdatasync also syncs the size, which reading the bytes back needs.
        let synced = fdatasync(descriptor) == 0
        let error = synced ? nil : failure("sync")
        close(descriptor)
        if let error { throw error }
        try syncShard(Self.shard(of: name))
    }

    /// Syncs the subdirectories of the files `names`, so their removals before it are on disk (an erasure's).
    ///
    /// - Throws: `StoreError` when a subdirectory cannot be synced.
    func syncEntries(of names: some Sequence<String>) throws(StoreError) {
        for shard in Set(names.map(Self.shard(of:))) { try syncShard(shard) }
    }

    private func syncShard(_ shard: String) throws(StoreError) {
        let descriptor = openat(directory, shard, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open the subdirectory of") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("sync the directory entry of") }
    }

    /// The body file `name`, open for reading, or nil when it is gone (a commit since the row was read deleted its
    /// version).
    ///
    /// - Throws: `StoreError` when it cannot be opened, or its size is not the `length` its row records.
    func open(_ name: String, length: Int) throws(StoreError) -> BlobFile? {
        let file = openat(directory, Self.relativePath(name), O_RDONLY | O_CLOEXEC)
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
        for name in names { unlinkat(directory, Self.relativePath(name), 0) }
    }

    /// Removes every file whose name is not in `named`: the files of saves that never committed and of versions whose
    /// removal a crash interrupted. A named file still in the directory itself, where bodies were kept before the
    /// subdirectories, is moved into its subdirectory and the move synced.
    ///
    /// - Throws: `StoreError` when a directory cannot be listed, or a move cannot be made or synced.
    func sweep(keeping named: Set<String>) throws(StoreError) {
        let shardNames = Set(Self.shards)
        var moved: [String] = []
        for name in try list(path) where !shardNames.contains(name) {
            guard named.contains(name) else {
                unlinkat(directory, name, 0)
                continue
            }
            guard renameat(directory, name, directory, Self.relativePath(name)) == 0 else { throw failure("move") }
            moved.append(name)
        }
        if !moved.isEmpty {
            try syncEntries(of: moved)
            guard fsync(directory) == 0 else { throw failure("sync the moves of") }
        }
        for shard in Self.shards {
            for name in try list(path + "/" + shard) where !named.contains(name) {
                unlinkat(directory, shard + "/" + name, 0)
            }
        }
    }

    private func list(_ directory: String) throws(StoreError) -> [String] {
        do { return try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw StoreError(.unavailable, "cannot list the body directory \(directory)")
        }
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
