import VaultCore

/// A per-user cap on accepted saves within a sliding window, decided from the save history.
///
/// The caller stores the instants of accepted saves (refused ones never count) and asks for a
/// decision before each save; keeping the history outside makes the rule shareable by every
/// server node that reads the same database.
public struct SlidingWindowRateLimit: Sendable, Hashable {
    /// The outcome of asking whether one more save may happen now.
    public enum Decision: Sendable, Hashable {
        /// The save may proceed; `remaining` more fit in the window after it.
        case allowed(remaining: Int)
        /// The cap is reached; a save is allowed again after `retryAfterSeconds`.
        case limited(retryAfterSeconds: Int)
    }

    /// How many saves the window holds.
    public let limit: Int
    /// The window length in milliseconds.
    public let windowMilliseconds: Int64

    /// Creates a policy of `limit` saves per `windowSeconds`.
    public init(limit: Int, windowSeconds: Int64 = 3600) {
        self.limit = limit
        self.windowMilliseconds = windowSeconds * 1000
    }

    /// The instant before which history no longer matters, for pruning.
    public func horizon(now: UTCTimestamp) -> Int64 {
        now.millisecondsSinceEpoch - windowMilliseconds
    }

    /// Decides whether a save may happen at `now` given the instants of earlier accepted saves.
    public func decide(acceptedSaves: [Int64], now: UTCTimestamp) -> Decision {
        let horizon = horizon(now: now)
        let inWindow = acceptedSaves.filter { $0 > horizon }.sorted()
        guard inWindow.count >= limit else { return .allowed(remaining: limit - inWindow.count - 1) }
        // The save that frees a slot is the one that makes the count drop below the limit.
        let freeing = inWindow[inWindow.count - limit]
        let waitMilliseconds = freeing + windowMilliseconds - now.millisecondsSinceEpoch
        return .limited(retryAfterSeconds: max(1, Int((waitMilliseconds + 999) / 1000)))
    }
}
