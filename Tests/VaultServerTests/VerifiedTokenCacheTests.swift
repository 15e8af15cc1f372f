import Foundation
import Testing
import VaultCore
import VaultStorage

@testable import VaultServer

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

    /// Full of live tokens, the cache drops half of them, not all: the users it keeps are not all verified again at once.
    @Test func keepsHalfWhenFullOfLiveTokens() {
        let cache = VerifiedTokenCache(capacity: 100)
        let now = UTCTimestamp(millisecondsSinceEpoch: 0)
        for index in 0..<100 {
            cache.remember(
                .init(key: StorageKey(bytes: Data(count: 32)), userTag: "\(index)", validUntil: 600_000), for: "t\(index)", now: now)
        }
        #expect(cache.count == 100)
        cache.remember(.init(key: StorageKey(bytes: Data(count: 32)), userTag: "new", validUntil: 600_000), for: "new", now: now)
        #expect(cache.count == 51)
        #expect(cache.entry(for: "new", now: now)?.userTag == "new")
        #expect((0..<100).filter { cache.entry(for: "t\($0)", now: now) != nil }.count == 50)
    }

    /// Renewed tokens replace expired ones: the expired are swept out within a minute, not kept until the cap.
    @Test func sweepsExpiredTokensWellBeforeTheCap() {
        let cache = VerifiedTokenCache(capacity: 1000)
        func remember(_ name: String, at milliseconds: Int64) {
            cache.remember(
                .init(key: StorageKey(bytes: Data(count: 32)), userTag: name, validUntil: milliseconds + 600_000),
                for: name, now: UTCTimestamp(millisecondsSinceEpoch: milliseconds))
        }
        for index in 0..<10 { remember("first-\(index)", at: 0) }
        remember("renewed", at: 600_000 + VerifiedTokenCache.sweepInterval)
        #expect(cache.count == 1)
    }
}
