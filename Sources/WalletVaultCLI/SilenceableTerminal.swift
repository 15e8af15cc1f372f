import Synchronization

/// A terminal that can be silenced for good: once the demo is interrupted, a command still finishing says nothing,
/// so the last words are the interruption's own.
final class SilenceableTerminal: Terminal {
    private let base: any Terminal
    private let silenced = Atomic(false)

    /// Writes to `base` until `silence()`.
    init(base: any Terminal) {
        self.base = base
    }

    /// Drops everything written from now on.
    func silence() { silenced.store(true, ordering: .sequentiallyConsistent) }

    private var speaking: Bool { !silenced.load(ordering: .sequentiallyConsistent) }

    var isInteractive: Bool { base.isInteractive }
    var showsProgress: Bool { speaking && base.showsProgress }

    func write(_ text: String) {
        if speaking { base.write(text) }
    }

    func writeError(_ text: String) {
        if speaking { base.writeError(text) }
    }

    func readLine(prompt: String) -> String? { speaking ? base.readLine(prompt: prompt) : nil }
    func readSecret(prompt: String) -> String? { speaking ? base.readSecret(prompt: prompt) : nil }
}
