import Synchronization
import VaultCore
import VaultServer

/// A server clock that moves when the test says: token expiry and rate-limit windows without sleeping.
public final class ManualClock: ServerClock {
    /// The time read when nothing was added, or nil when it follows the wall clock.
    private let frozenAt: Int64?
    /// What `advance` added.
    private let offset = Mutex<Int64>(0)

    /// A clock that reads `start` until it is moved.
    public init(start: UTCTimestamp) {
        frozenAt = start.millisecondsSinceEpoch
    }

    /// A clock that reads the wall clock plus what `advance` added, so that tokens a test signs for the present stay
    /// valid however long a loaded machine takes between the server's creation and a device's first request (a
    /// clock frozen at creation refused them as issued in the future once that passed a minute).
    public init() {
        frozenAt = nil
    }

    public func now() -> UTCTimestamp {
        let base = frozenAt ?? SystemClock().now().millisecondsSinceEpoch
        return UTCTimestamp(millisecondsSinceEpoch: base + offset.withLock { $0 })
    }

    /// Moves the clock forward by `seconds`.
    public func advance(seconds: Double) {
        offset.withLock { $0 += Int64((seconds * 1000).rounded()) }
    }
}
