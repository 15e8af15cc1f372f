import Synchronization

/// The change feed of a single node (SQLite): an announcement goes straight to this process's subscriber.
public final class InProcessChangeFeed: BlobChangeFeed {
    private let subscriber = Mutex<ChangeSubscriber?>(nil)

    /// Creates a feed with no subscriber.
    public init() {}

    public func publish(_ tag: String) {
        subscriber.withLock { $0 }?.onChange(tag)
    }

    public func subscribe(onChange: @escaping @Sendable (String) -> Void, onMissed: @escaping @Sendable () -> Void) {
        let subscriber = ChangeSubscriber(onChange: onChange, onMissed: onMissed)
        self.subscriber.withLock { $0 = subscriber }
    }

    public func stop() {}
}
