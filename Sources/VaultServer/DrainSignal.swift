import Synchronization

/// Set once the server starts shutting down, so readiness can say so before the last request in flight ends.
public final class DrainSignal: Sendable {
    private let raised = Atomic<Bool>(false)

    /// Creates a signal that is not raised.
    public init() {}

    /// Marks the server as draining; there is no way back.
    public func raise() { raised.store(true, ordering: .releasing) }

    /// Whether the server is draining.
    public var isRaised: Bool { raised.load(ordering: .acquiring) }
}
