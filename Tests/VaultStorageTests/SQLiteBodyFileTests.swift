import Foundation
import Synchronization
import Testing
import VaultCore
import VaultTestSupport
import VaultWire

@testable import VaultStorage

/// The SQLite store's body files (issue 31): a load hands over an open file, trims and erasures remove what they must
/// from the disk, and concurrent saves, loads and erasures of one user never serve a torn or erased body.
@Suite("SQLite body files")
struct SQLiteBodyFileTests {
    let path = ScratchDirectory.path("bodies", suffix: "sqlite")
    let key = StorageKey(bytes: Data(repeating: 7, count: 32))
    let other = StorageKey(bytes: Data(repeating: 8, count: 32))

    /// A body no other test writes: `tag` and a random 16-byte marker, repeated to `count` bytes.
    static func body(_ tag: String, count: Int = 20_000) -> Data {
        let marker = Data(tag.utf8) + Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        var body = Data()
        while body.count < count { body.append(marker) }
        return body.prefix(count)
    }

    func request(_ body: Data, at milliseconds: Int64, for user: StorageKey? = nil, precondition: SavePrecondition = .none)
        -> SaveRequest
    {
        SaveRequest(
            key: user ?? key, body: body,
            header: VaultBlobHeader(
                updatedUtc: "2026-08-12T19:00:00Z", updatedAt: UTCTimestamp(millisecondsSinceEpoch: 0), hint: "h",
                kekIDs: ["k"], cipherByteCount: 1),
            precondition: precondition, rateLimit: SlidingWindowRateLimit(limit: 100_000),
            now: UTCTimestamp(millisecondsSinceEpoch: milliseconds))
    }

    /// Every file of this store on disk: the database, its log and shared memory, and the body files.
    func filesOnDisk() -> [String] {
        [path, path + "-wal", path + "-shm"].filter { FileManager.default.fileExists(atPath: $0) }
            + BodyFileListing.paths(in: path + ".bodies")
    }

    /// Whether any file of this store holds the first 32 bytes of `body` (its tag and marker).
    func diskHolds(_ body: Data) -> Bool {
        let needle = body.prefix(32)
        return filesOnDisk().contains { (FileManager.default.contents(atPath: $0) ?? Data()).range(of: needle) != nil }
    }

    func bodyFileCount() -> Int {
        BodyFileListing.paths(in: path + ".bodies").count
    }

    @Test func aLoadHandsOverTheBodyFileWithTheRowsLength() throws {
        let store = try SQLiteVaultStore(path: path, historyVersions: 10)
        let saved = Self.body("load")
        _ = try store.save(request(saved, at: 1000))
        let loaded = try #require(try store.load(key))
        guard case .file(let file) = loaded.content else {
            Issue.record("a load read the body into memory")
            return
        }
        #expect(file.length == saved.count && file.offset == 0)
        #expect(try file.read() == saved)
        #expect(try store.versions(key).map(\.bytes) == [saved.count])
    }

    /// Each body file sits in the subdirectory its name's first two characters name, and on ext4 the body directory
    /// carries the top-directory flag that spreads those subdirectories over block groups.
    @Test func bodyFilesSitInTheSubdirectoryTheirNameBeginsWith() throws {
        let store = try SQLiteVaultStore(path: path, historyVersions: 10)
        for index in 0..<20 { _ = try store.save(request(Self.body("spread \(index)"), at: Int64(index + 1) * 1000)) }
        let files = BodyFileListing.paths(in: path + ".bodies")
        #expect(files.count == 10)
        for file in files {
            let parts = file.dropFirst(path.count + ".bodies/".count).split(separator: "/")
            #expect(parts.count == 2 && parts[1].count == 32 && parts[1].hasPrefix(parts[0]), "\(file)")
        }
        // Where the file system takes the flag on a directory of the test's own, the body directory must carry it.
        if Self.topDirectoryFlag(settingOn: path + ".probe") == true {
            #expect(Self.topDirectoryFlag(settingOn: nil, of: path + ".bodies") == true, "not marked as a top directory")
        }
    }

    /// Whether `path`'s top-directory flag (`FS_TOPDIR_FL`) is set: after trying to set it on a new directory at
    /// `settingOn`, or as `of` has it. Nil when the file system keeps no flags.
    static func topDirectoryFlag(settingOn newDirectory: String?, of existing: String? = nil) -> Bool? {
        if let newDirectory { mkdir(newDirectory, 0o700) }
        defer { if let newDirectory { rmdir(newDirectory) } }
        let directory = open(newDirectory ?? existing ?? "", O_RDONLY | O_DIRECTORY)
        guard directory >= 0 else { return nil }
        defer { close(directory) }
        var flags: CInt = 0
        guard ioctl(directory, BodyFileDirectory.getFlagsRequest, &flags) == 0 else { return nil }
        if newDirectory != nil {
            flags |= BodyFileDirectory.topDirectoryFlag
            _ = ioctl(directory, BodyFileDirectory.setFlagsRequest, &flags)
            guard ioctl(directory, BodyFileDirectory.getFlagsRequest, &flags) == 0 else { return nil }
        }
        return flags & BodyFileDirectory.topDirectoryFlag != 0
    }

    /// A store whose body files are still in the directory itself (the layout before subdirectories) moves those its
    /// rows name into their subdirectories when it opens, and serves them from there; other files there go.
    @Test func openingMovesBodyFilesOfTheFlatLayoutIntoTheirSubdirectories() throws {
        let kept = Self.body("flat kept")
        let older = Self.body("flat older")
        do {
            let store = try SQLiteVaultStore(path: path, historyVersions: 10)
            _ = try store.save(request(older, at: 1000))
            _ = try store.save(request(kept, at: 2000))
            store.close()
        }
        let bodies = path + ".bodies"
        for file in BodyFileListing.paths(in: bodies) {
            try FileManager.default.moveItem(atPath: file, toPath: bodies + "/" + (file as NSString).lastPathComponent)
        }
        let stray = Self.body("flat stray")
        #expect(FileManager.default.createFile(atPath: bodies + "/fedcba9876543210fedcba9876543210", contents: stray))
        let reopened = try SQLiteVaultStore(path: path, historyVersions: 10)
        #expect(try reopened.load(key)?.body == kept)
        let versions = try reopened.versions(key)
        #expect(try reopened.load(key, syncID: try #require(versions.map(\.syncID).min()))?.body == older)
        let files = BodyFileListing.paths(in: bodies)
        #expect(files.count == 2 && files.allSatisfy { $0.dropFirst(bodies.count + 1).contains("/") })
        #expect(!diskHolds(stray))
    }

    /// The index of newest versions follows saves and erasures, and takes in what a load of an earlier process's
    /// save read from the database.
    @Test func theIndexOfNewestVersionsFollowsSavesErasuresAndLoads() throws {
        do {
            let store = try SQLiteVaultStore(path: path, historyVersions: 10)
            _ = try store.save(request(Self.body("first"), at: 1000))
            _ = try store.save(request(Self.body("second"), at: 2000))
            #expect(store.latest.version(of: key)?.syncID == UTCTimestamp(millisecondsSinceEpoch: 2000))
            store.close()
        }
        let reopened = try SQLiteVaultStore(path: path, historyVersions: 10)
        #expect(reopened.latest.version(of: key) == nil)
        #expect(try reopened.load(key)?.syncID == UTCTimestamp(millisecondsSinceEpoch: 2000))
        #expect(reopened.latest.version(of: key)?.syncID == UTCTimestamp(millisecondsSinceEpoch: 2000))
        #expect(try reopened.delete(key, proof: nil) == .erased)
        #expect(reopened.latest.version(of: key) == nil)
        #expect(try reopened.load(key) == nil)
    }

    @Test func anErasedUsersBytesAreGoneFromTheDisk() throws {
        let store = try SQLiteVaultStore(path: path, historyVersions: 10)
        let first = Self.body("erase-1")
        let second = Self.body("erase-2")
        let kept = Self.body("kept")
        _ = try store.save(request(first, at: 1000))
        _ = try store.save(request(second, at: 2000))
        _ = try store.save(request(kept, at: 3000, for: other))
        #expect(diskHolds(first) && diskHolds(second))
        #expect(try store.delete(key, proof: nil) == .erased)
        #expect(!diskHolds(first), "the first version's bytes are still on disk")
        #expect(!diskHolds(second), "the current version's bytes are still on disk")
        #expect(try store.load(key) == nil)
        #expect(try store.load(other)?.body == kept)
        #expect(bodyFileCount() == 1)
    }

    @Test func aTrimmedVersionsFileIsRemovedAndARefusedSaveLeavesNone() throws {
        let store = try SQLiteVaultStore(path: path, historyVersions: 2)
        let bodies = (1...4).map { Self.body("trim-\($0)") }
        for (index, body) in bodies.enumerated() { _ = try store.save(request(body, at: Int64(index + 1) * 1000)) }
        #expect(bodyFileCount() == 2)
        #expect(!diskHolds(bodies[0]) && !diskHolds(bodies[1]))
        #expect(diskHolds(bodies[2]) && diskHolds(bodies[3]))
        // A conflict with the committed version is refused before its body reaches the disk: a file made and removed
        // again would still change the directory's modification time (review of 2026-12-03, F3).
        let before = try directoryModification()
        let refused = Self.body("refused")
        let outcome = try store.save(request(refused, at: 9000, precondition: .absent))
        guard case .conflict = outcome else {
            Issue.record("expected a conflict, got \(outcome)")
            return
        }
        #expect(try directoryModification() == before)
        #expect(bodyFileCount() == 2)
        #expect(!diskHolds(refused))
    }

    /// A save without the proof the stored version's write key asks for writes no body file either (F3), and one with
    /// a valid proof is checked once before its file is written and again in its batch, against the same version.
    @Test func aSaveItsWriterProofRefusesWritesNoBodyFile() throws {
        let store = try SQLiteVaultStore(path: path, historyVersions: 10)
        let base = request(Self.body("member"), at: 1000)
        let member = SaveRequest(
            key: key, body: base.body, header: base.header, precondition: .none, rateLimit: base.rateLimit, now: base.now,
            writeKey: Data(repeating: 7, count: 64))
        guard case .saved = try store.save(member) else {
            Issue.record("the member's save")
            return
        }
        let before = try directoryModification()
        let stranger = Self.body("no proof")
        #expect(try store.save(request(stranger, at: 2000)) == .writerRefused)
        let wrong = request(Self.body("wrong proof"), at: 3000)
        let refused = SaveRequest(
            key: key, body: wrong.body, header: wrong.header, precondition: .none, rateLimit: wrong.rateLimit, now: wrong.now,
            proof: WriterProof { _, _ in false })
        #expect(try store.save(refused) == .writerRefused)
        #expect(try directoryModification() == before)
        #expect(!diskHolds(stranger) && !diskHolds(wrong.body))
        let checks = Mutex(0)
        let next = request(Self.body("next"), at: 4000)
        let proven = SaveRequest(
            key: key, body: next.body, header: next.header, precondition: .none, rateLimit: next.rateLimit, now: next.now,
            proof: WriterProof { writeKey, _ in
                checks.withLock { $0 += 1 }
                return writeKey == Data(repeating: 7, count: 64)
            })
        guard case .saved = try store.save(proven) else {
            Issue.record("a save with a valid proof")
            return
        }
        #expect(checks.withLock { $0 } == 1, "the proof is verified once for one stored version")
    }

    /// A store opened on an existing database knows no user's newest version yet: a refused save is still refused
    /// before its file is written, from the committed row, and so it is after a load recorded the version (whose
    /// write key the index must then carry, or the proofless save would pass its check and write its file).
    @Test func aRefusedSaveWritesNoBodyFileBeforeAndAfterTheStoreLearnsTheVersion() throws {
        let base = request(Self.body("member"), at: 1000)
        do {
            let store = try SQLiteVaultStore(path: path, historyVersions: 10)
            let member = SaveRequest(
                key: key, body: base.body, header: base.header, precondition: .none, rateLimit: base.rateLimit,
                now: base.now, writeKey: Data(repeating: 7, count: 64))
            guard case .saved = try store.save(member) else {
                Issue.record("the member's save")
                return
            }
            store.close()
        }
        let store = try SQLiteVaultStore(path: path, historyVersions: 10)
        let before = try directoryModification()
        let unproven = Self.body("unproven")
        #expect(try store.save(request(unproven, at: 2000)) == .writerRefused)
        let creation = Self.body("creation")
        guard case .conflict(let current) = try store.save(request(creation, at: 3000, precondition: .absent)) else {
            Issue.record("a create over a stored version")
            return
        }
        #expect(current?.syncID == UTCTimestamp(millisecondsSinceEpoch: 1000))
        #expect(try store.load(key)?.body == base.body)
        let afterLoad = Self.body("after load")
        #expect(try store.save(request(afterLoad, at: 4000)) == .writerRefused)
        #expect(try directoryModification() == before)
        #expect(!diskHolds(unproven) && !diskHolds(creation) && !diskHolds(afterLoad))
    }

    @Test func aSaveOverTheHourlyCapWritesNoBodyFile() throws {
        let store = try SQLiteVaultStore(path: path, historyVersions: 10)
        let capped = { (body: Data, at: Int64) in
            SaveRequest(
                key: self.key, body: body, header: self.request(body, at: at).header, precondition: .none,
                rateLimit: SlidingWindowRateLimit(limit: 2), now: UTCTimestamp(millisecondsSinceEpoch: at))
        }
        for at in [1000, 2000] as [Int64] { _ = try store.save(capped(Self.body("within-\(at)"), at)) }
        #expect(bodyFileCount() == 2)
        // A file made and removed again would still change the directory's modification time.
        let before = try directoryModification()
        let over = Self.body("over the cap")
        let outcome = try store.save(capped(over, 3000))
        guard case .rateLimited = outcome else {
            Issue.record("expected the cap, got \(outcome)")
            return
        }
        #expect(try directoryModification() == before)
        #expect(bodyFileCount() == 2)
        #expect(!diskHolds(over))
    }

    /// The modification times of the body directory and its subdirectories, to the nanosecond.
    func directoryModification() throws -> [String: [Int]] {
        let times = BodyFileListing.modificationTimes(of: path + ".bodies")
        guard times.count == 257 else { throw CocoaError(.fileNoSuchFile) }
        return times
    }

    @Test func openingRemovesFilesNoRowNames() throws {
        let saved = Self.body("swept-keep")
        do {
            let store = try SQLiteVaultStore(path: path, historyVersions: 10)
            _ = try store.save(request(saved, at: 1000))
        }
        // What a crash between writing a save's file and committing its row leaves behind.
        let stray = Self.body("swept-stray")
        #expect(FileManager.default.createFile(atPath: path + ".bodies/0123456789abcdef0123456789abcdef", contents: stray))
        let reopened = try SQLiteVaultStore(path: path, historyVersions: 10)
        #expect(!diskHolds(stray))
        #expect(try reopened.load(key)?.body == saved)
    }

    /// One writer saves and erases one user in turn while three threads load it. Every body a load returns must be,
    /// byte for byte, the one saved under the sync ID it came with, and a load that ran wholly between an erasure's
    /// return and the next save's start must find nothing. History of one version makes every save remove the file
    /// of the version before, under the loads.
    /// With ten versions kept, the files of older versions stay on disk: a load that took an older version from the
    /// store's index of newest versions after a newer save returned would serve it, and must not.
    @Test(arguments: [1, 10])
    func concurrentSaveLoadAndEraseNeverServeATornOrErasedBody(historyVersions: Int) async throws {
        let store = try SQLiteVaultStore(path: path, historyVersions: historyVersions)
        try await SaveLoadEraseRace.run(store: store, key: key, rounds: 60) { [self] in request($0, at: $1) }
        #expect(bodyFileCount() == 0)
        #expect(store.latest.count == 0, "the erased user is still in the index")
    }
}
