/// Tells every server node that a user's blob changed, by the user's change tag (a hash of the storage key, never
/// the subject), so long-polls waiting on it re-read it.
public protocol BlobChangeFeed: Sendable {
    /// Announces that the blob under `tag` changed (saved or erased); called after the change is durable.
    func publish(_ tag: String)
    /// Adds a subscriber: what is called with each tag announced, on any node, and what is called when announcements
    /// may have been missed (a listening connection lost and made again), so every waiter must re-read. Subscribers
    /// are called in the order they were added.
    func subscribe(onChange: @escaping @Sendable (String) -> Void, onMissed: @escaping @Sendable () -> Void)
    /// Stops listening.
    func stop()
}
