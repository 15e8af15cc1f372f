import Synchronization
import VaultCore
import VaultServer

/// A server clock that moves only when the test says: token expiry and rate-limit windows without sleeping.
public final class ManualClock: ServerClock {
    private let milliseconds: Mutex<Int64>

    /// A clock that reads `start` until it is moved; by default the wall clock's time now, so that tokens signed
    /// for the present are valid.
    public init(start: UTCTimestamp = SystemClock().now()) {
        milliseconds = Mutex(start.millisecondsSinceEpoch)
    }

    public func now() -> UTCTimestamp {
        UTCTimestamp(millisecondsSinceEpoch: milliseconds.withLock { $0 })
    }

    /// Moves the clock forward by `seconds`.
    public func advance(seconds: Double) {
        milliseconds.withLock { $0 += Int64((seconds * 1000).rounded()) }
    }
}
