import Foundation
import Testing
import VaultCore
@testable import VaultServer

@Suite("SQLite store")
struct SQLiteVaultStoreTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite").path
    let key = StorageKey(bytes: Data(repeating: 9, count: 32))
    let header = VaultBlobHeader(updatedUtc: "2026-08-12T19:00:00Z", updatedAt: UTCTimestamp(millisecondsSinceEpoch: 0),
                                 hint: "h", kekIDs: ["k"], cipherByteCount: 1)

    func request(_ body: String, at milliseconds: Int64, limit: Int = 60, precondition: SavePrecondition = .none) -> SaveRequest {
        SaveRequest(key: key, body: Data(body.utf8), header: header, precondition: precondition,
                    rateLimit: SlidingWindowRateLimit(limit: limit), now: UTCTimestamp(millisecondsSinceEpoch: milliseconds))
    }

    @Test func refusedSavesDoNotCountAndTheWindowSlides() throws {
        let store = try SQLiteVaultStore(path: path)
        let start: Int64 = 1_800_000_000_000
        guard case .saved = try store.save(request("a", at: start, limit: 2)) else { Issue.record("first save"); return }
        guard case .saved = try store.save(request("b", at: start + 1000, limit: 2)) else { Issue.record("second save"); return }
        for offset in stride(from: Int64(2000), to: 3_000_000, by: 500_000) {
            #expect(try store.save(request("x", at: start + offset, limit: 2)) == .rateLimited(.limited(
                retryAfterSeconds: Int((start + 3_600_000 - (start + offset) + 999) / 1000))))
        }
        // An hour after the first save exactly one slot is free, however many refusals came between.
        guard case .saved = try store.save(request("c", at: start + 3_600_001, limit: 2)) else { Issue.record("slid"); return }
        guard case .rateLimited = try store.save(request("d", at: start + 3_600_002, limit: 2)) else { Issue.record("cap"); return }
        #expect(try store.load(key)?.body == Data("c".utf8))
    }

    @Test func syncIDsIncreaseEvenWhenTheClockStepsBack() throws {
        let store = try SQLiteVaultStore(path: path)
        var previous: UTCTimestamp?
        for (index, time) in [Int64(5000), 5000, 4000, 5000, 6000].enumerated() {
            guard case .saved(let syncID, _) = try store.save(request("\(index)", at: time)) else { Issue.record("save"); return }
            if let previous { #expect(syncID > previous) }
            previous = syncID
        }
    }

    @Test func preconditionsAndPersistenceAcrossReopen() throws {
        do {
            let store = try SQLiteVaultStore(path: path)
            guard case .saved(let first, _) = try store.save(request("one", at: 1000, precondition: .absent)) else {
                Issue.record("absent")
                return
            }
            guard case .conflict(let current) = try store.save(request("two", at: 2000, precondition: .absent)) else {
                Issue.record("absent again")
                return
            }
            #expect(current?.syncID == first)
            guard case .saved = try store.save(request("two", at: 3000, precondition: .matches([first]))) else {
                Issue.record("match")
                return
            }
            guard case .conflict = try store.save(request("three", at: 4000, precondition: .matches([first]))) else {
                Issue.record("stale")
                return
            }
        }
        let reopened = try SQLiteVaultStore(path: path)
        #expect(try reopened.load(key)?.body == Data("two".utf8))
        #expect(try reopened.load(StorageKey(bytes: Data(repeating: 1, count: 32))) == nil)
    }
}
