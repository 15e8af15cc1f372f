import Foundation
import VaultCore

/// The SDK's source of time and of waiting, injected so tests run without sleeping.
public protocol WalletClock: Sendable {
    /// The current instant.
    func now() -> UTCTimestamp
    /// Waits `seconds`; throws `CancellationError` when the task is cancelled.
    func sleep(seconds: Double) async throws
}

/// The system clock and `Task.sleep`.
public struct SystemWalletClock: WalletClock {
    /// Creates the system clock.
    public init() {}

    public func now() -> UTCTimestamp {
        UTCTimestamp(millisecondsSinceEpoch: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }

    public func sleep(seconds: Double) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
    }
}
