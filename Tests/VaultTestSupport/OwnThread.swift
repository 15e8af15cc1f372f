import Foundation
import Synchronization

/// Runs blocking `body` (disk syncs, waits) on a thread of its own and awaits it, so that it never holds one of the
/// cooperative pool's threads: there are as many as cores (two here), and two tests blocking both stalled every
/// other test for 10-30 s, long enough to fail the live tests that time slow clients (SlowClientAndDrainTests).
/// `body` must not use `#expect`: it runs outside the test's task; return what to check instead.
public func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
    }
}
