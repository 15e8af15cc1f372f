import Foundation
import Testing
import VaultCore
import VaultTestSupport
import VaultWire

@testable import VaultStorage

/// A PostgreSQL node's read-through cache of bodies as files (issue 31): the database still decides what a load
/// answers, another node's save or erasure is never hidden by a cached file, and an erased user's bytes leave the
/// node's disk.
@Suite(.enabled(if: TestPostgres.enabled, TestPostgres.skipMessage))
struct PostgresBodyCacheTests {
    let directory = ScratchDirectory.path("body-cache", suffix: "d")
    let key = freshKey()

    /// The change feed's tag for a key in these tests (the server uses a hash of it; any injective name will do).
    static func tag(of key: StorageKey) -> String { key.bytes.map { String(format: "%02x", $0) }.joined() }

    func cache(budgetBytes: Int = 8 << 20) throws -> PostgresBodyCache {
        try PostgresBodyCache(directory: directory, budgetBytes: budgetBytes, changeTag: Self.tag(of:))
    }

    func node(_ cache: PostgresBodyCache?) throws -> PostgresVaultStore {
        try PostgresVaultStore(url: try TestPostgres.requireURL(), poolSize: 4, historyVersions: 2, bodyCache: cache)
    }

    func request(_ body: Data, at milliseconds: Int64, for user: StorageKey? = nil) -> SaveRequest {
        SaveRequest(
            key: user ?? key, body: body,
            header: VaultBlobHeader(
                updatedUtc: "2026-12-02T15:00:00Z", updatedAt: UTCTimestamp(millisecondsSinceEpoch: 0), hint: "h",
                kekIDs: ["k"], cipherByteCount: 1),
            precondition: .none, rateLimit: SlidingWindowRateLimit(limit: 100_000),
            now: UTCTimestamp(millisecondsSinceEpoch: milliseconds))
    }

    /// Whether any file in the cache directory holds the first 32 bytes of `body` (its tag and random marker).
    func directoryHolds(_ body: Data) -> Bool {
        let needle = body.prefix(32)
        return filesOnDisk().contains { (FileManager.default.contents(atPath: $0) ?? Data()).range(of: needle) != nil }
    }

    /// The paths of the cache's files.
    func filesOnDisk() -> [String] {
        BodyFileListing.paths(in: directory)
    }

    @Test func aSecondLoadOfTheSameVersionIsSentFromTheNodesFile() throws {
        let store = try node(try cache())
        let body = SQLiteBodyFileTests.body("cached")
        guard case .saved(let syncID, _) = try store.save(request(body, at: 1_000)) else {
            Issue.record("refused")
            return
        }
        let first = try #require(try store.load(key))
        guard case .bytes(let bytes) = first.content else {
            Issue.record("the first load had no bytes to keep")
            return
        }
        #expect(bytes == body && first.syncID == syncID)
        #expect(directoryHolds(body))
        let second = try #require(try store.load(key))
        guard case .file(let file) = second.content else {
            Issue.record("the second load was not from the file")
            return
        }
        #expect(try file.read() == body)
        #expect(second.syncID == syncID && second.updatedUtc == "2026-12-02T15:00:00Z" && second.hint == "h")
    }

    /// A node with a body cache and one without; `body` saved on the second and loaded twice on the first, which then
    /// holds it in a file.
    func twoNodes(holding body: Data) throws -> (cached: PostgresVaultStore, other: PostgresVaultStore) {
        let cached = try node(try cache())
        let other = try node(nil)
        _ = try other.save(request(body, at: 1_000))
        _ = try cached.load(key)
        guard case .file = try cached.load(key)?.content else { throw StoreError(.corrupt, "the second load had no file") }
        return (cached, other)
    }

    @Test func aNewerVersionSavedOnAnotherNodeIsServedNotTheCachedOne() throws {
        let (cached, other) = try twoNodes(holding: SQLiteBodyFileTests.body("old"))
        // No announcement reaches this node: the query alone must see the newer row.
        let new = SQLiteBodyFileTests.body("new")
        guard case .saved(let syncID, _) = try other.save(request(new, at: 2_000)) else {
            Issue.record("refused")
            return
        }
        let loaded = try #require(try cached.load(key))
        #expect(loaded.syncID == syncID && loaded.body == new)
    }

    @Test func aUserErasedOnAnotherNodeIsNotServedEvenBeforeTheNodeHearsOfIt() throws {
        let (cached, other) = try twoNodes(holding: SQLiteBodyFileTests.body("erased elsewhere"))
        #expect(try other.delete(key, proof: nil) == .erased)
        #expect(try cached.load(key) == nil)
    }

    @Test func anErasureAnnouncedByAnotherNodeRemovesTheBytesFromThisNodesDisk() async throws {
        let url = try TestPostgres.requireURL()
        let bodyCache = try cache()
        let feed = PostgresChangeFeed(url: url)
        defer { feed.stop() }
        feed.subscribe(onChange: bodyCache.forget(tag:), onMissed: bodyCache.forgetAll)
        let listening = try await eventually { feed.isListening }
        #expect(listening, "the feed never listened")
        let cached = try node(bodyCache)
        let other = try node(nil)
        let body = SQLiteBodyFileTests.body("announced")
        _ = try other.save(request(body, at: 1_000))
        _ = try cached.load(key)
        #expect(directoryHolds(body))
        #expect(try other.delete(key, proof: nil) == .erased)
        // What the erasing node's endpoint does after the commit.
        let announcer = PostgresChangeFeed(url: url)
        announcer.publish(Self.tag(of: key))
        announcer.stop()
        let gone = try await eventually { !directoryHolds(body) }
        #expect(gone, "the erased user's body is still in the cache directory")
        #expect(bodyCache.held.count == 0)
    }

    @Test func thisNodesOwnErasureRemovesTheFileAtOnce() throws {
        let bodyCache = try cache()
        let store = try node(bodyCache)
        let body = SQLiteBodyFileTests.body("erased here")
        _ = try store.save(request(body, at: 1_000))
        _ = try store.load(key)
        #expect(directoryHolds(body))
        #expect(try store.delete(key, proof: nil) == .erased)
        #expect(!directoryHolds(body))
        #expect(filesOnDisk().isEmpty)
    }

    @Test func aBodyReadWhileItsUserWasAnnouncedIsNotKept() throws {
        let bodyCache = try cache()
        let ticket = bodyCache.ticket(for: key)
        bodyCache.forget(tag: Self.tag(of: key))
        bodyCache.admit(SQLiteBodyFileTests.body("stale"), syncID: UTCTimestamp(millisecondsSinceEpoch: 1), ticket: ticket)
        #expect(bodyCache.held.count == 0)
        #expect(filesOnDisk().isEmpty)
        let missed = bodyCache.ticket(for: key)
        bodyCache.forgetAll()
        bodyCache.admit(SQLiteBodyFileTests.body("stale"), syncID: UTCTimestamp(millisecondsSinceEpoch: 1), ticket: missed)
        #expect(filesOnDisk().isEmpty)
    }

    @Test func whileTheFeedIsDeafNothingIsKeptAndListeningAgainStartsFromEmpty() throws {
        let bodyCache = try cache()
        bodyCache.admit(
            SQLiteBodyFileTests.body("before"), syncID: UTCTimestamp(millisecondsSinceEpoch: 1),
            ticket: bodyCache.ticket(for: freshKey()))
        #expect(filesOnDisk().count == 1)
        bodyCache.feedLost()
        #expect(filesOnDisk().isEmpty)
        bodyCache.admit(
            SQLiteBodyFileTests.body("deaf"), syncID: UTCTimestamp(millisecondsSinceEpoch: 1), ticket: bodyCache.ticket(for: key))
        #expect(filesOnDisk().isEmpty, "a body was kept while an erasure elsewhere would have gone unheard")
        bodyCache.forgetAll()
        bodyCache.admit(
            SQLiteBodyFileTests.body("heard"), syncID: UTCTimestamp(millisecondsSinceEpoch: 1), ticket: bodyCache.ticket(for: key))
        #expect(filesOnDisk().count == 1)
    }

    @Test func missedAnnouncementsEmptyTheCache() throws {
        let bodyCache = try cache()
        for index in 0..<5 {
            let user = freshKey()
            bodyCache.admit(
                SQLiteBodyFileTests.body("user \(index)"), syncID: UTCTimestamp(millisecondsSinceEpoch: 1),
                ticket: bodyCache.ticket(for: user))
        }
        #expect(filesOnDisk().count == 5)
        bodyCache.forgetAll()
        #expect(filesOnDisk().isEmpty && bodyCache.held.count == 0)
    }

    @Test func startingEmptiesTheDirectory() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: directory + "/left-by-a-crash", contents: Data("old body".utf8))
        _ = try cache()
        #expect(filesOnDisk().isEmpty)
    }

    @Test func theFilesStayWithinTheBudgetOneInEightAdmittedOnceFullOldestOut() throws {
        let bodyCache = try cache(budgetBytes: 200_000)
        let users = (0..<30).map { _ in freshKey() }
        for (index, user) in users.enumerated() {
            bodyCache.admit(
                SQLiteBodyFileTests.body("user \(index)", count: 20_000), syncID: UTCTimestamp(millisecondsSinceEpoch: 1),
                ticket: bodyCache.ticket(for: user))
            #expect(bodyCache.held.bytes <= 200_000)
        }
        #expect(filesOnDisk().count == 10)
        // Ten fit; of the twenty after, the 8th and 16th (users 17 and 25) are admitted, each evicting the oldest.
        let held = users.indices.filter { bodyCache.ticket(for: users[$0]).cached != nil }
        #expect(held == Array(2...9) + [17, 25])
        // A body over a quarter of the budget is not kept.
        bodyCache.admit(
            SQLiteBodyFileTests.body("large", count: 60_000), syncID: UTCTimestamp(millisecondsSinceEpoch: 1),
            ticket: bodyCache.ticket(for: freshKey()))
        #expect(filesOnDisk().count == 10)
    }

    @Test func concurrentSaveLoadAndEraseThroughTheCacheNeverServeATornOrErasedBody() async throws {
        let store = try node(try cache())
        try await SaveLoadEraseRace.run(store: store, key: key, rounds: 40) { [self] in request($0, at: $1) }
        #expect(filesOnDisk().isEmpty, "an erased user's body is still in the cache directory")
    }
}
