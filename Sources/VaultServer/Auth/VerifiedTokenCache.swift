import Synchronization
import VaultCore

/// Remembers session tokens that already verified, until they expire.
///
/// A wallet reuses its session token for up to ten minutes; re-checking its HMAC, parsing its
/// JSON and deriving the storage key on every request was most of the cost of a load. A token
/// is looked up by its exact text, so a changed byte is a miss and gets the full check.
final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let key: StorageKey
        let userTag: String
        /// Milliseconds after which the token no longer verifies (its `exp` plus leeway).
        let validUntil: Int64
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let capacity: Int

    init(capacity: Int = 16_384) {
        self.capacity = capacity
    }

    func entry(for token: String, now: UTCTimestamp) -> Entry? {
        entries.withLock { entries in
            guard let entry = entries[token] else { return nil }
            guard now.millisecondsSinceEpoch < entry.validUntil else {
                entries[token] = nil
                return nil
            }
            return entry
        }
    }

    func remember(_ entry: Entry, for token: String, now: UTCTimestamp) {
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.validUntil > now.millisecondsSinceEpoch }
                // Still full of live tokens: start over rather than track recency on every hit.
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[token] = entry
        }
    }
}
