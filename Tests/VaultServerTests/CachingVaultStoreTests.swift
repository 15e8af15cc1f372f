import Foundation
import Testing
import VaultCore
import VaultWire
@testable import VaultServer

@Suite("Blob cache in front of the SQLite store")
struct CachingVaultStoreTests {
    let path = ScratchDirectory.path("cache", suffix: "sqlite")

    func request(_ key: StorageKey, _ body: String, at milliseconds: Int64, precondition: SavePrecondition = .none) -> SaveRequest {
        let header = VaultBlobHeader(updatedUtc: "2026-08-12T19:00:0\(body.count % 10)Z", updatedAt: UTCTimestamp(millisecondsSinceEpoch: 0),
                                     hint: body, kekIDs: ["k"], cipherByteCount: 1)
        return SaveRequest(key: key, body: Data(body.utf8), header: header, precondition: precondition,
                           rateLimit: SlidingWindowRateLimit(limit: 1000), now: UTCTimestamp(millisecondsSinceEpoch: milliseconds))
    }

    func key(_ byte: UInt8) -> StorageKey { StorageKey(bytes: Data(repeating: byte, count: 32)) }

    @Test func answersExactlyWhatTheStoreHolds() throws {
        let base = try SQLiteVaultStore(path: path, historyVersions: 10)
        let cached = CachingVaultStore(base: base, budgetBytes: 1024)
        #expect(try cached.load(key(1)) == nil)
        _ = try cached.save(request(key(1), "first", at: 1000))
        #expect(try cached.load(key(1)) == base.load(key(1)))
        guard case .saved = try cached.save(request(key(1), "second", at: 2000)) else { Issue.record("save"); return }
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

@Suite("Verified session token cache")
struct VerifiedTokenCacheTests {
    @Test func forgetsTokensAtTheirExpiry() {
        let cache = VerifiedTokenCache(capacity: 2)
        let entry = VerifiedTokenCache.Entry(key: StorageKey(bytes: Data(count: 32)), userTag: "t", validUntil: 10_000)
        cache.remember(entry, for: "token", now: UTCTimestamp(millisecondsSinceEpoch: 0))
        #expect(cache.entry(for: "token", now: UTCTimestamp(millisecondsSinceEpoch: 9_999))?.userTag == "t")
        #expect(cache.entry(for: "token", now: UTCTimestamp(millisecondsSinceEpoch: 10_000)) == nil)
        #expect(cache.entry(for: "token", now: UTCTimestamp(millisecondsSinceEpoch: 0)) == nil)
    }

    @Test func boundedByCapacity() {
        let cache = VerifiedTokenCache(capacity: 2)
        let now = UTCTimestamp(millisecondsSinceEpoch: 0)
        for index in 0..<5 {
            cache.remember(.init(key: StorageKey(bytes: Data(count: 32)), userTag: "\(index)", validUntil: 100), for: "t\(index)", now: now)
        }
        let remembered = (0..<5).filter { cache.entry(for: "t\($0)", now: now) != nil }
        #expect(remembered.count <= 2)
        #expect(remembered.contains(4))
    }

    /// Renewed tokens replace expired ones: the expired are swept out within a minute, not kept until the cap.
    @Test func sweepsExpiredTokensWellBeforeTheCap() {
        let cache = VerifiedTokenCache(capacity: 1000)
        func remember(_ name: String, at milliseconds: Int64) {
            cache.remember(.init(key: StorageKey(bytes: Data(count: 32)), userTag: name, validUntil: milliseconds + 600_000),
                           for: name, now: UTCTimestamp(millisecondsSinceEpoch: milliseconds))
        }
        for index in 0..<10 { remember("first-\(index)", at: 0) }
        remember("renewed", at: 600_000 + VerifiedTokenCache.sweepInterval)
        #expect(cache.count == 1)
    }
}
