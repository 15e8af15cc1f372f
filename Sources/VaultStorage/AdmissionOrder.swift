/// The keys a cache admitted, oldest first, for its evictions: the in-memory blob cache and a node's body cache.
///
/// A key forgotten and admitted again appears twice; the cache's own entries say which keys are live, and `compact`
/// drops the places of the others once they outnumber the live ones, so the order stays near the cache's size.
struct AdmissionOrder<Key: Hashable> {
    private var keys: [Key] = []
    /// Where the oldest key not yet taken is.
    private var head = 0

    /// Puts `key` last.
    mutating func append(_ key: Key) {
        keys.append(key)
    }

    /// The oldest key not yet taken, or nil when every one was.
    mutating func takeOldest() -> Key? {
        guard head < keys.count else { return nil }
        head += 1
        return keys[head - 1]
    }

    /// Drops the places taken, and every place but the first of each live key once the stale ones outnumber the
    /// `liveCount` live keys (`isLive`).
    mutating func compact(liveCount: Int, isLive: (Key) -> Bool) {
        if head > 1024, head * 2 > keys.count {
            keys.removeFirst(head)
            head = 0
        }
        if keys.count - head > 2 * liveCount + 1024 {
            var seen = Set<Key>()
            keys = keys[head...].filter { isLive($0) && seen.insert($0).inserted }
            head = 0
        }
    }
}
