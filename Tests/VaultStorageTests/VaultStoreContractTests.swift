import Foundation
import Testing
import VaultCore
import VaultTestSupport
import VaultWire

@testable import VaultStorage

/// The same cases against every store: what `VaultStore` promises, whatever the database.
@Suite("Store contract")
struct VaultStoreContractTests {
    static let start: Int64 = 1_800_000_000_000

    func request(
        _ key: StorageKey, _ body: Data, at milliseconds: Int64, limit: Int = 60,
        precondition: SavePrecondition = .none, hint: String? = "h", updatedUtc: String = "2026-08-12T19:00:00Z"
    ) -> SaveRequest {
        SaveRequest(
            key: key, body: body,
            header: VaultBlobHeader(
                updatedUtc: updatedUtc, updatedAt: UTCTimestamp(millisecondsSinceEpoch: 0),
                hint: hint, kekIDs: ["k"], cipherByteCount: 1),
            precondition: precondition, rateLimit: SlidingWindowRateLimit(limit: limit),
            now: UTCTimestamp(millisecondsSinceEpoch: milliseconds))
    }

    func request(
        _ key: StorageKey, _ body: String, at milliseconds: Int64, limit: Int = 60,
        precondition: SavePrecondition = .none
    ) -> SaveRequest {
        request(key, Data(body.utf8), at: milliseconds, limit: limit, precondition: precondition)
    }

    /// A save naming `writeKey` for the version it stores and carrying `proof`.
    func request(_ key: StorageKey, _ body: String, at milliseconds: Int64, writeKey: Data?, proof: WriterProof?) -> SaveRequest {
        let plain = request(key, body, at: milliseconds)
        return SaveRequest(
            key: key, body: plain.body, header: plain.header, precondition: .none, rateLimit: plain.rateLimit, now: plain.now,
            writeKey: writeKey, proof: proof)
    }

    /// A proof that verifies only for `writeKey` at `syncID`, recording every (key, version) the store asked about.
    func proof(for writeKey: Data, at syncID: UTCTimestamp, asked: AskedProofs) -> WriterProof {
        WriterProof { key, stored in
            asked.record(key, stored)
            return key == writeKey && stored == syncID
        }
    }

    final class AskedProofs: @unchecked Sendable {
        // @unchecked: the store calls a proof from the saving thread only, one call at a time in these tests.
        private(set) var calls: [(Data, UTCTimestamp)] = []
        func record(_ key: Data, _ syncID: UTCTimestamp) { calls.append((key, syncID)) }
    }

    func savedID(_ outcome: SaveOutcome, sourceLocation: SourceLocation = #_sourceLocation) throws -> UTCTimestamp {
        guard case .saved(let syncID, _) = outcome else {
            Issue.record("expected a save, got \(outcome)", sourceLocation: sourceLocation)
            throw Unexpected()
        }
        return syncID
    }

    struct Unexpected: Error {}

    @Test(arguments: StoreFactory.all)
    func savesAndLoadsTheExactBytes(_ factory: StoreFactory) throws {
        let store = try factory.make()
        let key = freshKey()
        #expect(try store.load(key) == nil)
        // Every byte value, NULs included, and large enough to leave the row (TOAST, overflow pages).
        let body = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        let syncID = try savedID(store.save(request(key, body, at: Self.start, hint: "phone ü")))
        let loaded = try #require(try store.load(key))
        #expect(loaded == StoredVault(syncID: syncID, updatedUtc: "2026-08-12T19:00:00Z", hint: "phone ü", body: body))

        let second = try savedID(store.save(request(key, Data("{}".utf8), at: Self.start + 1, hint: nil)))
        #expect(try store.load(key) == StoredVault(syncID: second, updatedUtc: "2026-08-12T19:00:00Z", hint: nil, body: Data("{}".utf8)))
        #expect(try store.load(freshKey()) == nil)
        try store.checkReachable()
    }

    /// Sizes around SQLite's 16 KiB pages (a body that stays in its row, one that just leaves it, several overflow
    /// pages, exactly whole pages) load back byte for byte, as the current version and by sync ID.
    @Test(arguments: StoreFactory.all)
    func bodiesAroundPageSizesLoadByteForByte(_ factory: StoreFactory) throws {
        let store = try factory.make(historyVersions: 20)
        let key = freshKey()
        var saved: [(UTCTimestamp, Data)] = []
        for (index, count) in [1, 100, 4_000, 16_383, 16_384, 16_385, 32_768, 65_536, 65_537, 300_001].enumerated() {
            let body = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ count &+ $0 >> 14) })
            let syncID = try savedID(store.save(request(key, body, at: Self.start + Int64(index))))
            #expect(try store.load(key)?.body == body, "\(count) bytes")
            saved.append((syncID, body))
        }
        for (syncID, body) in saved {
            #expect(try store.load(key, syncID: syncID)?.body == body, "\(body.count) bytes by sync ID")
        }
    }

    /// Reads reuse pooled connections and their prepared statements; none may answer from an older snapshot.
    @Test(arguments: StoreFactory.all)
    func everyLoadSeesTheSaveBeforeIt(_ factory: StoreFactory) throws {
        let store = try factory.make()
        let keys = [freshKey(), freshKey()]
        for round in 0..<30 {
            for (index, key) in keys.enumerated() {
                let body = Data("round \(round) user \(index) ".utf8) + Data(repeating: UInt8(round), count: 20_000 * (round % 3))
                let syncID = try savedID(store.save(request(key, body, at: Self.start + Int64(round) * 10 + Int64(index))))
                let loaded = try #require(try store.load(key))
                #expect(loaded.syncID == syncID && loaded.body == body, "round \(round) user \(index)")
                #expect(try store.load(key, syncID: syncID)?.body == body)
            }
        }
    }

    @Test(arguments: StoreFactory.all)
    func preconditions(_ factory: StoreFactory) throws {
        let store = try factory.make()
        let key = freshKey()
        #expect(try store.save(request(key, "x", at: 500, precondition: .exists)) == .conflict(current: nil))
        #expect(
            try store.save(request(key, "x", at: 600, precondition: .matches([UTCTimestamp(millisecondsSinceEpoch: 1)])))
                == .conflict(current: nil))
        let first = try savedID(store.save(request(key, "one", at: 1000, precondition: .absent)))
        guard case .conflict(let current) = try store.save(request(key, "two", at: 2000, precondition: .absent)) else {
            Issue.record("absent again")
            return
        }
        #expect(current?.syncID == first)
        #expect(current?.updatedUtc == "2026-08-12T19:00:00Z")
        let second = try savedID(
            store.save(request(key, "two", at: 3000, precondition: .matches([UTCTimestamp(millisecondsSinceEpoch: 7), first]))))
        guard case .conflict(let stale) = try store.save(request(key, "three", at: 4000, precondition: .matches([first]))) else {
            Issue.record("stale")
            return
        }
        #expect(stale?.syncID == second)
        _ = try savedID(store.save(request(key, "four", at: 5000, precondition: .exists)))
        _ = try savedID(store.save(request(key, "five", at: 6000)))
        #expect(try store.load(key)?.body == Data("five".utf8))
    }

    @Test(arguments: StoreFactory.all)
    func syncIDsStrictlyIncreaseEvenWhenTheClockStepsBackAndAcrossDelete(_ factory: StoreFactory) throws {
        let store = try factory.make()
        let key = freshKey()
        var issued: [UTCTimestamp] = []
        for (index, time) in [Int64(5000), 5000, 4000, 5000, 6000].enumerated() {
            issued.append(try savedID(store.save(request(key, "\(index)", at: time))))
        }
        #expect(try store.delete(key, proof: nil) == .erased)
        // The clock went back before the erasure; the next ID must still follow every ID issued before it.
        issued.append(try savedID(store.save(request(key, "after", at: 3000))))
        #expect(issued.map(\.millisecondsSinceEpoch) == [5000, 5001, 5002, 5003, 6000, 6001])
    }

    @Test(arguments: StoreFactory.all)
    func refusedSavesDoNotCountAndTheWindowSlides(_ factory: StoreFactory) throws {
        let store = try factory.make()
        let key = freshKey()
        let start = Self.start
        guard case .saved(_, .allowed(remaining: 1)) = try store.save(request(key, "a", at: start, limit: 2)) else {
            Issue.record("first save")
            return
        }
        // A failed precondition is refused too, and must not use up the quota.
        guard case .conflict = try store.save(request(key, "p", at: start + 500, limit: 2, precondition: .absent)) else {
            Issue.record("precondition")
            return
        }
        guard case .saved(_, .allowed(remaining: 0)) = try store.save(request(key, "b", at: start + 1000, limit: 2)) else {
            Issue.record("second save")
            return
        }
        for offset in stride(from: Int64(2000), to: 3_000_000, by: 500_000) {
            #expect(
                try store.save(request(key, "x", at: start + offset, limit: 2))
                    == .rateLimited(
                        .limited(
                            retryAfterSeconds: Int((start + 3_600_000 - (start + offset) + 999) / 1000))))
        }
        // An hour after the first save exactly one slot is free, however many refusals came between.
        _ = try savedID(store.save(request(key, "c", at: start + 3_600_001, limit: 2)))
        #expect(
            try store.save(request(key, "d", at: start + 3_600_002, limit: 2))
                == .rateLimited(.limited(retryAfterSeconds: 1)))
        #expect(try store.load(key)?.body == Data("c".utf8))
        // Another user's quota is untouched.
        _ = try savedID(store.save(request(freshKey(), "e", at: start + 3_600_003, limit: 2)))
    }

    @Test(arguments: StoreFactory.all)
    func keepsTheNewestVersionsNewestFirst(_ factory: StoreFactory) throws {
        let store = try factory.make(historyVersions: 3)
        let key = freshKey()
        var saved: [(syncID: UTCTimestamp, body: Data)] = []
        for index in 0..<5 {
            let body = Data(repeating: UInt8(index), count: 1000 * (index + 1))
            saved.append(
                (
                    try savedID(
                        store.save(
                            request(
                                key, body, at: Self.start + Int64(index) * 10,
                                hint: index == 3 ? nil : "hint \(index)",
                                updatedUtc: "2026-08-12T19:00:0\(index)Z"))), body
                ))
        }
        let versions = try store.versions(key)
        #expect(
            versions
                == [4, 3, 2].map { index in
                    StoredVersion(
                        syncID: saved[index].syncID, bytes: 1000 * (index + 1), updatedUtc: "2026-08-12T19:00:0\(index)Z",
                        hint: index == 3 ? nil : "hint \(index)")
                })
        for index in 2..<5 {
            #expect(try store.load(key, syncID: saved[index].syncID)?.body == saved[index].body)
        }
        for index in 0..<2 {
            #expect(try store.load(key, syncID: saved[index].syncID) == nil)
        }
        #expect(try store.load(key)?.syncID == saved[4].syncID)
        #expect(try store.load(freshKey(), syncID: saved[4].syncID) == nil)
        #expect(try store.versions(freshKey()).isEmpty)
    }

    @Test(arguments: StoreFactory.all)
    func oneVersionKeepsOnlyTheCurrent(_ factory: StoreFactory) throws {
        let store = try factory.make(historyVersions: 1)
        let key = freshKey()
        let first = try savedID(store.save(request(key, "one", at: Self.start)))
        let second = try savedID(store.save(request(key, "two", at: Self.start + 1)))
        #expect(try store.versions(key).map(\.syncID) == [second])
        #expect(try store.load(key, syncID: first) == nil)
    }

    @Test(arguments: StoreFactory.all)
    func deleteErasesEverythingButTheCapAndIsIdempotent(_ factory: StoreFactory) throws {
        let store = try factory.make()
        let key = freshKey()
        let neighbour = freshKey()
        var ids: [UTCTimestamp] = []
        for index in 0..<3 { ids.append(try savedID(store.save(request(key, "v\(index)", at: Self.start + Int64(index), limit: 3)))) }
        _ = try savedID(store.save(request(neighbour, "n", at: Self.start, limit: 3)))
        #expect(try store.delete(key, proof: nil) == .erased)
        #expect(try store.load(key) == nil)
        #expect(try store.versions(key).isEmpty)
        for id in ids { #expect(try store.load(key, syncID: id) == nil) }
        #expect(try store.delete(key, proof: nil) == .erased)
        #expect(try store.delete(freshKey(), proof: nil) == .erased)
        // Erasing must not hand out a fresh hour of saves.
        guard case .rateLimited = try store.save(request(key, "again", at: Self.start + 10, limit: 3)) else {
            Issue.record("delete reset the rate limit")
            return
        }
        #expect(try store.load(key) == nil)
        #expect(try store.load(neighbour)?.body == Data("n".utf8))
        // Once the window passes, the user can store again, under a later sync ID.
        let later = try savedID(store.save(request(key, "back", at: Self.start + 3_600_001, limit: 3)))
        #expect(later > ids[2])
        #expect(try store.versions(key).map(\.syncID) == [later])
    }

    @Test(arguments: StoreFactory.all)
    func concurrentCompareAndSwapHasExactlyOneWinnerPerRound(_ factory: StoreFactory) throws {
        let store = try factory.make()
        let key = freshKey()
        var expected: UTCTimestamp?
        for round in 0..<6 {
            let precondition: SavePrecondition = expected.map { .matches([$0]) } ?? .absent
            let outcomes = concurrently(12) { index in
                Result { () throws(StoreError) -> SaveOutcome in
                    try store.save(request(key, "r\(round)-\(index)", at: Self.start + Int64(round), precondition: precondition))
                }
            }
            var winners: [(Int, UTCTimestamp)] = []
            for (index, outcome) in outcomes.enumerated() {
                switch try outcome.get() {
                case .saved(let syncID, _): winners.append((index, syncID))
                case .conflict(let current): #expect(current != nil && current?.syncID != expected)
                case .rateLimited: Issue.record("rate limited in round \(round)")
                case .writerRefused: Issue.record("writer refused in round \(round)")
                }
            }
            try #require(winners.count == 1, "round \(round): \(winners.count) winners")
            #expect(try store.load(key)?.body == Data("r\(round)-\(winners[0].0)".utf8))
            #expect(try store.load(key)?.syncID == winners[0].1)
            expected = winners[0].1
        }
        #expect(try store.versions(key).count == 6)
    }

    @Test(arguments: StoreFactory.all)
    func aVersionWithAWriteKeyIsReplacedOrErasedOnlyWithAProofByIt(_ factory: StoreFactory) throws {
        let store = try factory.make()
        let key = freshKey()
        let writeKey = Data(repeating: 0xA1, count: 64)
        let asked = AskedProofs()
        // The first version names a write key; nothing was stored, so it needs no proof.
        let first = try savedID(store.save(request(key, "member-1", at: Self.start, writeKey: writeKey, proof: nil)))

        // A bare save (the seed's), a proof that does not verify, and a bare erasure change nothing and do not count.
        #expect(try store.save(request(key, "bare", at: Self.start + 1)) == .writerRefused)
        let wrong = WriterProof { _, _ in false }
        #expect(try store.save(request(key, "wrong", at: Self.start + 2, writeKey: nil, proof: wrong)) == .writerRefused)
        #expect(try store.delete(key, proof: nil) == .writerRefused)
        #expect(try store.delete(key, proof: wrong) == .writerRefused)
        #expect(try store.load(key)?.body == Data("member-1".utf8))
        #expect(try store.versions(key).count == 1)

        // A proof by the stored key for the stored version replaces it; the new version names another key.
        let nextKey = Data(repeating: 0xB2, count: 64)
        let second = try savedID(
            store.save(
                request(key, "member-2", at: Self.start + 3, writeKey: nextKey, proof: proof(for: writeKey, at: first, asked: asked))))
        #expect(asked.calls.last.map { $0.0 == writeKey && $0.1 == first } == true)
        // The old key's proof, good for the version it named, proves nothing about the next one.
        #expect(try store.delete(key, proof: proof(for: writeKey, at: first, asked: asked)) == .writerRefused)
        #expect(try store.load(key)?.body == Data("member-2".utf8))
        #expect(try store.delete(key, proof: proof(for: nextKey, at: second, asked: asked)) == .erased)
        #expect(try store.load(key) == nil)
        // After an erasure anyone holding the login may start again, as on a fresh account.
        _ = try savedID(store.save(request(key, "fresh", at: Self.start + 4)))
        // Refused saves did not count: five accepted saves and erasures so far, 60 allowed.
        #expect(try store.versions(key).count == 1)
    }

    @Test(arguments: StoreFactory.all)
    func aVersionWithoutAWriteKeyTakesTheSeedsBareSaveAndErasure(_ factory: StoreFactory) throws {
        let store = try factory.make()
        let key = freshKey()
        _ = try savedID(store.save(request(key, "seed-1", at: Self.start)))
        _ = try savedID(store.save(request(key, "seed-2", at: Self.start + 1, writeKey: nil, proof: WriterProof { _, _ in false })))
        #expect(try store.load(key)?.body == Data("seed-2".utf8))
        #expect(try store.delete(key, proof: nil) == .erased)
        #expect(try store.load(key) == nil)
    }
}
