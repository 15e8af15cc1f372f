/// Tells every server node that a user's blob changed, by the user's change tag (a hash of the storage key, never
/// the subject), so long-polls waiting on it re-read it.
public protocol BlobChangeFeed: Sendable {
    /// Announces that the blob under `tag` changed (saved or erased); called after the change is durable.
    func publish(_ tag: String)
    /// Adds a subscriber: what is called with each tag announced, on any node; what is called once the feed listens
    /// after announcements may have been missed (at the start, or a listening connection lost and made again), so
    /// every waiter must re-read; and what is called when it stops hearing them (the connection lost, or an engine
    /// that cannot listen). Subscribers are called in the order they were added.
    func subscribe(
        onChange: @escaping @Sendable (String) -> Void, onMissed: @escaping @Sendable () -> Void,
        onLost: @escaping @Sendable () -> Void)
    /// Stops listening.
    func stop()
}

extension BlobChangeFeed {
    /// Adds a subscriber that needs no word of the feed going deaf (long-polls re-read at their deadline anyway).
    public func subscribe(onChange: @escaping @Sendable (String) -> Void, onMissed: @escaping @Sendable () -> Void) {
        subscribe(onChange: onChange, onMissed: onMissed, onLost: {})
    }
}
