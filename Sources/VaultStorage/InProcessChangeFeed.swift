import Synchronization

/// The change feed of a single node (SQLite): an announcement goes straight to this process's subscribers.
public final class InProcessChangeFeed: BlobChangeFeed {
    private let subscribers = Mutex<[ChangeSubscriber]>([])

    /// Creates a feed with no subscribers.
    public init() {}

    public func publish(_ tag: String) {
        for subscriber in subscribers.withLock({ $0 }) { subscriber.onChange(tag) }
    }

    public func subscribe(
        onChange: @escaping @Sendable (String) -> Void, onMissed: @escaping @Sendable () -> Void,
        onLost: @escaping @Sendable () -> Void
    ) {
        let subscriber = ChangeSubscriber(onChange: onChange, onMissed: onMissed, onLost: onLost)
        subscribers.withLock { $0.append(subscriber) }
    }

    public func stop() {}
}
