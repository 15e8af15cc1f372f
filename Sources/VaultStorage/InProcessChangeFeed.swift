import Synchronization

/// The change feed of a single node (SQLite): an announcement goes straight to this process's subscriber.
public final class InProcessChangeFeed: BlobChangeFeed {
    private let onChange = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Creates a feed with no subscriber.
    public init() {}

    public func publish(_ tag: String) {
        onChange.withLock { $0 }?(tag)
    }

    public func subscribe(onChange: @escaping @Sendable (String) -> Void, onMissed: @escaping @Sendable () -> Void) {
        self.onChange.withLock { $0 = onChange }
    }

    public func stop() {}
}
