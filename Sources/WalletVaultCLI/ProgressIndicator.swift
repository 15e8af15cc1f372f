import Foundation
import Synchronization

/// A spinner on the error stream for steps that may take more than a second (Argon2id, uploads).
///
/// It ticks on its own thread so that a step blocking its caller (Argon2id runs synchronously) still shows
/// movement, and it draws nothing when standard error is not a terminal.
final class ProgressIndicator: Sendable {
    private static let frames = ["|", "/", "-", "\\"]
    /// How many prompts are open; drawing waits while any is, so a spinner never overwrites a question.
    private static let prompts = Mutex(0)
    private let label: String
    private let terminal: any Terminal
    private let delaySeconds: Double
    private let stopped = Mutex(false)
    private let drew = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)

    private init(label: String, terminal: any Terminal, delaySeconds: Double) {
        self.label = label
        self.terminal = terminal
        self.delaySeconds = delaySeconds
    }

    /// Runs `body`, showing `label` with a spinner once it has run for `delaySeconds`.
    static func during<T, E: Error>(
        _ label: String, terminal: any Terminal, delaySeconds: Double = 1,
        _ body: () async throws(E) -> T
    ) async throws(E) -> T {
        guard terminal.showsProgress else { return try await body() }
        let indicator = ProgressIndicator(label: label, terminal: terminal, delaySeconds: delaySeconds)
        let thread = Thread { indicator.tick() }
        thread.start()
        defer { indicator.stop() }
        return try await body()
    }

    /// Runs `body` (a prompt) with every spinner stopped and its line cleared.
    static func pausedForPrompt<T>(_ terminal: any Terminal, _ body: () -> T) -> T {
        prompts.withLock { open in
            open += 1
            if terminal.showsProgress { terminal.writeError("\r\u{1B}[K") }
        }
        defer { prompts.withLock { $0 -= 1 } }
        return body()
    }

    private func tick() {
        let start = Date()
        var frame = 0
        while !stopped.withLock({ $0 }) {
            let elapsed = Date().timeIntervalSince(start)
            if elapsed >= delaySeconds {
                // Checked and drawn under the lock that `pausedForPrompt` takes, so no frame lands after its clear.
                Self.prompts.withLock { open in
                    guard open == 0 else { return }
                    drew.withLock { $0 = true }
                    terminal.writeError("\r\(Self.frames[frame % Self.frames.count]) \(label)… \(Int(elapsed)) s")
                    frame += 1
                }
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        if drew.withLock({ $0 }) { terminal.writeError("\r\u{1B}[K") }
        finished.signal()
    }

    private func stop() {
        stopped.withLock { $0 = true }
        // Wait for the line to be cleared so the next output does not land on the spinner's line.
        finished.wait()
    }
}
