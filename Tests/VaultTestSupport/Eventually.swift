import Foundation

/// Polls `condition` every `interval` until it holds or `timeout` has passed, and returns whether it held.
///
/// For a test that must wait for something to have happened (a log line written, a state reached, a connection
/// closed, a callback called) instead of sleeping a fixed time and hoping it has: it returns as soon as the condition
/// holds, and the deadline is only how long a loaded machine may take. The condition is checked once more at the
/// deadline, so a wait that timed out means it was still false then. Use the result in an assertion that says what
/// was awaited, awaited before it: `let drained = try await eventually { server.log().contains("drained") }`, then
/// `#expect(drained, "never drained")` (full parallel runs crashed in `swift_retain` inside the closure `#expect`
/// built around an `eventually` awaited in it).
///
/// - Parameters:
///   - timeout: How long to keep polling.
///   - interval: The pause between two checks.
///   - condition: What to wait for; it runs on the caller's task, and may be called many times.
/// - Returns: Whether `condition` held before the deadline.
/// - Throws: What `condition` throws, or `CancellationError` when the task is cancelled while waiting.
public func eventually(
    timeout: Duration = .seconds(10), interval: Duration = .milliseconds(10), _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: interval)
    }
    return try await condition()
}
