import Foundation
import Synchronization
import VaultCore
import VaultCrypto
import VaultStorage

/// Remembers session tokens that already verified, until they expire.
///
/// A wallet reuses its session token for up to ten minutes; re-checking its HMAC, parsing its
/// JSON and deriving the storage key on every request was most of the cost of a load. A token
/// is looked up by the SHA-256 of its exact text, so a changed byte is a miss and gets the full check,
/// and a remembered token costs 32 bytes rather than a copy of its few hundred.
final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let key: StorageKey
        let userTag: String
        /// Milliseconds after which the token no longer verifies (its `exp` plus leeway).
        let validUntil: Int64
    }

    /// The SHA-256 of a token's text, held inline: a collision would let one token pass for another.
    private struct TokenDigest: Hashable {
        let words: SIMD4<UInt64>

        init(_ token: String) {
            var text = token
            words = text.withUTF8 { utf8 in
                SHA256.withDigest(of: UnsafeRawBufferPointer(utf8)) { $0.loadUnaligned(as: SIMD4<UInt64>.self) }
            }
        }
    }

    private struct State {
        var entries: [TokenDigest: Entry] = [:]
        /// When expired entries are next swept out; without sweeps every renewed token would stay until the cap.
        var nextSweep: Int64 = 0
    }

    /// How often expired entries are dropped, in milliseconds.
    static let sweepInterval: Int64 = 60_000

    private let state = Mutex(State())
    private let capacity: Int

    /// Room for 131 072 live tokens, about 20 MiB: every user active within one token lifetime (ten minutes) of a
    /// node serving 100 000 users. At 16 384 a load of 20 000 random users wiped the cache every 16 384 new
    /// tokens, so most loads verified their token again (docs/PERFORMANCE.md, issue 19).
    init(capacity: Int = 131_072) {
        self.capacity = capacity
    }

    /// How many tokens are remembered.
    var count: Int { state.withLock { $0.entries.count } }

    func entry(for token: String, now: UTCTimestamp) -> Entry? {
        let digest = TokenDigest(token)
        return state.withLock { state in
            guard let entry = state.entries[digest] else { return nil }
            guard now.millisecondsSinceEpoch < entry.validUntil else {
                state.entries[digest] = nil
                return nil
            }
            return entry
        }
    }

    func remember(_ entry: Entry, for token: String, now: UTCTimestamp) {
        let now = now.millisecondsSinceEpoch
        let digest = TokenDigest(token)
        state.withLock { state in
            if state.entries.count >= capacity || now >= state.nextSweep {
                state.entries = state.entries.filter { $0.value.validUntil > now }
                state.nextSweep = now + Self.sweepInterval
                // Still full of live tokens: drop half of them, in the dictionary's (hash, so arbitrary) order, rather
                // than track recency on every hit. Dropping all would make every user verify again at once.
                if state.entries.count >= capacity {
                    var dropped = 0
                    let excess = state.entries.count - capacity / 2
                    state.entries = state.entries.filter { _ in
                        dropped += 1
                        return dropped > excess
                    }
                }
            }
            state.entries[digest] = entry
        }
    }
}
