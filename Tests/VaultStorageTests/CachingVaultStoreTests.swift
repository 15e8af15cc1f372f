import Foundation
import Testing
import VaultCore
import VaultTestSupport
import VaultWire

@testable import VaultStorage

@Suite("Blob cache in front of the SQLite store")
struct CachingVaultStoreTests {
    let path = ScratchDirectory.path("cache", suffix: "sqlite")

    func request(_ key: StorageKey, _ body: String, at milliseconds: Int64, precondition: SavePrecondition = .none) -> SaveRequest {
        let header = VaultBlobHeader(
            updatedUtc: "2026-08-12T19:00:0\(body.count % 10)Z", updatedAt: UTCTimestamp(millisecondsSinceEpoch: 0),
            hint: body, kekIDs: ["k"], cipherByteCount: 1)
        return SaveRequest(
            key: key, body: Data(body.utf8), header: header, precondition: precondition,
            rateLimit: SlidingWindowRateLimit(limit: 1000), now: UTCTimestamp(millisecondsSinceEpoch: milliseconds))
    }

    func key(_ byte: UInt8) -> StorageKey { StorageKey(bytes: Data(repeating: byte, count: 32)) }

    @Test func answersExactlyWhatTheStoreHolds() throws {
        let base = try SQLiteVaultStore(path: path, historyVersions: 10)
        let cached = CachingVaultStore(base: base, budgetBytes: 1024)
        #expect(try cached.load(key(1)) == nil)
        _ = try cached.save(request(key(1), "first", at: 1000))
        #expect(try cached.load(key(1)) == base.load(key(1)))
        guard case .saved = try cached.save(request(key(1), "second", at: 2000)) else {
            Issue.record("save")
            return
        }
        #expect(try cached.load(key(1))?.body == Data("second".utf8))
        #expect(try cached.load(key(1)) == base.load(key(1)))
        // A refused save changes neither.
        guard case .conflict = try cached.save(request(key(1), "third", at: 3000, precondition: .absent)) else {
            Issue.record("conflict")
            return
        }
        #expect(try cached.load(key(1))?.body == Data("second".utf8))
    }

    @Test func staysWithinItsBudget() throws {
        let base = try SQLiteVaultStore(path: path, historyVersions: 10)
        let cached = CachingVaultStore(base: base, budgetBytes: 400)
        let body = String(repeating: "x", count: 90)
        for index in 0..<20 {
            _ = try cached.save(request(key(UInt8(index)), body, at: Int64(1000 + index)))
        }
        // Every blob still loads, evicted or not, and matches the store.
        for index in 0..<20 {
            #expect(try cached.load(key(UInt8(index))) == base.load(key(UInt8(index))))
        }
    }
}

/// Loads only the base store answers, counted; one load or save can be held just after the store answered it.
private final class CountingStore: VaultStore, @unchecked Sendable {
    enum Operation { case load, save }

    let base: any VaultStore
    /// Hands out loaded bodies in memory, as the PostgreSQL store does, rather than in the SQLite store's files.
    let inMemory: Bool
    var loads = 0
    /// The next call of this kind signals `answered` once the store answered it, then waits for `proceed`.
    var holding: Operation?
    let answered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)

    init(_ base: any VaultStore, inMemory: Bool = false) {
        self.base = base
        self.inMemory = inMemory
    }
    func load(_ key: StorageKey) throws(StoreError) -> StoredVault? {
        loads += 1
        let loaded = try base.load(key)
        hold(.load)
        guard inMemory, let loaded else { return loaded }
        return StoredVault(syncID: loaded.syncID, updatedUtc: loaded.updatedUtc, hint: loaded.hint, body: loaded.body)
    }
    func load(_ key: StorageKey, syncID: UTCTimestamp) throws(StoreError) -> StoredVault? { try base.load(key, syncID: syncID) }
    func versions(_ key: StorageKey) throws(StoreError) -> [StoredVersion] { try base.versions(key) }
    func save(_ request: SaveRequest) throws(StoreError) -> SaveOutcome {
        let outcome = try base.save(request)
        hold(.save)
        return outcome
    }
    private func hold(_ operation: Operation) {
        guard holding == operation else { return }
        holding = nil
        answered.signal()
        proceed.wait()
    }
    func delete(_ key: StorageKey, proof: WriterProof?) throws(StoreError) -> EraseOutcome { try base.delete(key, proof: proof) }
    func checkReachable() throws(StoreError) { try base.checkReachable() }
    func close() { base.close() }
}

@Suite("Blob cache: what it remembers")
struct CachingVaultStorePolicyTests {
    let path = ScratchDirectory.path("cache-policy", suffix: "sqlite")
    let saver = CachingVaultStoreTests()

    /// A save is remembered either way; a loaded blob only when asked to remember loads.
    @Test(arguments: [false, true])
    func remembersSavesAndLoadsOnlyWhenAsked(_ remembersLoads: Bool) throws {
        let sqlite = try SQLiteVaultStore(path: path, historyVersions: 10)
        _ = try sqlite.save(saver.request(saver.key(1), "stored before", at: 1000))
        let counted = CountingStore(sqlite, inMemory: true)
        let cached = CachingVaultStore(base: counted, budgetBytes: 1 << 20, remembersLoads: remembersLoads)
        _ = try cached.save(saver.request(saver.key(2), "saved through the cache", at: 2000))
        #expect(try cached.load(saver.key(2))?.body == Data("saved through the cache".utf8))
        #expect(counted.loads == 0)
        for _ in 0..<3 { #expect(try cached.load(saver.key(1))?.body == Data("stored before".utf8)) }
        #expect(counted.loads == (remembersLoads ? 1 : 3))
        #expect(try cached.load(saver.key(1)) == sqlite.load(saver.key(1)))
    }

    /// A body the store hands out as a file is sent from it, never read in to be remembered (issue 31).
    @Test func aBodyInAFileIsNotRemembered() throws {
        let sqlite = try SQLiteVaultStore(path: path, historyVersions: 10)
        _ = try sqlite.save(saver.request(saver.key(1), "in a file", at: 1000))
        let counted = CountingStore(sqlite)
        let cached = CachingVaultStore(base: counted, budgetBytes: 1 << 20)
        for _ in 0..<3 { #expect(try cached.load(saver.key(1))?.body == Data("in a file".utf8)) }
        #expect(counted.loads == 3)
        #expect(cached.held.count == 0)
    }

    /// A loaded blob is kept only while there is room: loads never push out what is held.
    @Test func aLoadNeverEvicts() throws {
        let sqlite = try SQLiteVaultStore(path: path, historyVersions: 10)
        let counted = CountingStore(sqlite)
        let cached = CachingVaultStore(base: counted, budgetBytes: 400)
        let body = String(repeating: "s", count: 90)
        for index in 0..<4 { _ = try cached.save(saver.request(saver.key(UInt8(index)), body, at: Int64(1000 + index))) }
        _ = try sqlite.save(saver.request(saver.key(9), body, at: 2000))
        #expect(cached.held.count == 4)
        for _ in 0..<3 { #expect(try cached.load(saver.key(9))?.body == Data(body.utf8)) }
        #expect(counted.loads == 3, "360 of 400 bytes held: the fifth blob is not admitted")
        for index in 0..<4 { #expect(try cached.load(saver.key(UInt8(index)))?.body == Data(body.utf8)) }
        #expect(counted.loads == 3)
    }

    /// Eviction is CLOCK: a blob hit since it was admitted survives one pass; the oldest one not hit goes.
    @Test func aHitBlobGetsASecondChance() throws {
        let sqlite = try SQLiteVaultStore(path: path, historyVersions: 10)
        let counted = CountingStore(sqlite)
        let cached = CachingVaultStore(base: counted, budgetBytes: 400)
        let body = String(repeating: "c", count: 90)
        for index in 0..<4 { _ = try cached.save(saver.request(saver.key(UInt8(index)), body, at: Int64(1000 + index))) }
        _ = try cached.load(saver.key(0))
        _ = try cached.save(saver.request(saver.key(4), body, at: 2000))
        #expect(cached.held.count == 4)
        #expect(cached.held.bytes == 360)
        for index in [0, 2, 3, 4] { _ = try cached.load(saver.key(UInt8(index))) }
        #expect(counted.loads == 0, "key 1, the oldest not hit, was evicted; the others are held")
        _ = try cached.load(saver.key(1))
        #expect(counted.loads == 1)
    }

    /// Saves and erasures over and over keep the bookkeeping near the blobs held.
    @Test func staysWithinItsBudgetUnderChurn() throws {
        let sqlite = try SQLiteVaultStore(path: path, historyVersions: 1)
        let cached = CachingVaultStore(base: sqlite, budgetBytes: 2_000)
        for round in 0..<1_000 {
            let key = saver.key(UInt8(round % 50))
            if round % 7 == 0 {
                _ = try cached.delete(key, proof: nil)
            } else {
                _ = try cached.save(saver.request(key, String(repeating: "x", count: 10 + round % 300), at: Int64(1_000 + round)))
            }
            _ = try cached.load(saver.key(UInt8((round * 13) % 50)))
            #expect(cached.held.bytes <= 2_000)
        }
        for index in 0..<50 { #expect(try cached.load(saver.key(UInt8(index))) == sqlite.load(saver.key(UInt8(index)))) }
    }
}

/// A save or load the store answered, held before the cache records it while another write of the key runs: the cache
/// must then answer what the store holds, not what the held call read or wrote (review of 2026-12-03).
@Suite("Blob cache: writes and loads that overlap")
struct CachingVaultStoreOverlapTests {
    let path = ScratchDirectory.path("cache-overlap", suffix: "sqlite")
    let saver = CachingVaultStoreTests()

    /// Starts `held` on a thread of its own, lets the store answer it, runs `meanwhile`, then lets `held` finish.
    private func overlap(
        _ store: CountingStore, holding operation: CountingStore.Operation, call held: @escaping @Sendable () -> Void,
        meanwhile: () throws -> Void
    ) rethrows {
        store.holding = operation
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            held()
            finished.signal()
        }
        store.answered.wait()
        defer {
            store.proceed.signal()
            finished.wait()
        }
        try meanwhile()
    }

    /// A save ("first") or a load of it the store answered is held while a newer save or an erasure of the key runs
    /// through the cache; after both, the cache answers the newer version, or nothing.
    @Test(arguments: [false, true], [false, true])
    func anOverlappedWriteLeavesWhatTheStoreHolds(holdingALoad: Bool, thenErasing: Bool) throws {
        let sqlite = try SQLiteVaultStore(path: path, historyVersions: 10)
        let key = saver.key(1)
        if holdingALoad { _ = try sqlite.save(saver.request(key, "first", at: 1000)) }
        let held = CountingStore(sqlite, inMemory: true)
        let cached = CachingVaultStore(base: held)
        try overlap(
            held, holding: holdingALoad ? .load : .save,
            call: {
                if holdingALoad { _ = try? cached.load(key) } else { _ = try? cached.save(saver.request(key, "first", at: 1000)) }
            },
            meanwhile: {
                if thenErasing {
                    let erased = try cached.delete(key, proof: nil)
                    #expect(erased == .erased)
                } else {
                    _ = try cached.save(saver.request(key, "newer", at: 2000))
                }
            })
        let stored = try sqlite.load(key)
        #expect(stored?.body == (thenErasing ? nil : Data("newer".utf8)))
        #expect(try cached.load(key)?.body == stored?.body)
        #expect(try cached.load(key)?.syncID == stored?.syncID)
    }
}
