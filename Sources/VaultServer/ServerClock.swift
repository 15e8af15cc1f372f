import Foundation
import VaultCore

/// The server's source of time, injected so tests can move it.
public protocol ServerClock: Sendable {
    /// The current instant.
    func now() -> UTCTimestamp
}

/// The system's wall clock.
public struct SystemClock: ServerClock {
    /// Creates the system clock.
    public init() {}

    public func now() -> UTCTimestamp {
        UTCTimestamp(millisecondsSinceEpoch: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }
}
