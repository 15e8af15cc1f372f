import Synchronization

/// The demo's view of a command: output indented under the command line it narrates, and recorded so the demo can
/// read what a command printed (the pairing request, the recovery code). Both streams are narrated on the output
/// stream, so `walletvault demo | less` shows the errors the story is about. Never interactive: the demo answers
/// every question with options, as a script would.
final class CapturingTerminal: Terminal {
    private let base: any Terminal
    private let indent: String
    private let captured = Mutex("")

    private let shortening: (path: String, name: String)?

    /// Narrates on `base`, indenting by `indent` and showing `shortening.path` as `shortening.name`.
    init(base: any Terminal, indent: String = "    ", shortening: (path: String, name: String)? = nil) {
        self.base = base
        self.indent = indent
        self.shortening = shortening
    }

    /// Everything written to the output stream.
    var output: String { captured.withLock { $0 } }

    var isInteractive: Bool { false }
    var showsProgress: Bool { base.showsProgress }

    func write(_ text: String) {
        captured.withLock { $0 += text }
        base.write(indented(text))
    }

    func writeError(_ text: String) {
        // Progress redraws its line with a carriage return; indenting it would break the redraw.
        if text.hasPrefix("\r") { base.writeError(text) } else { base.write(indented(text)) }
    }

    func readLine(prompt: String) -> String? { nil }
    func readSecret(prompt: String) -> String? { nil }

    private func indented(_ text: String) -> String {
        let text = shortening.map { text.replacingOccurrences(of: $0.path, with: $0.name) } ?? text
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : indent + $0 }
        if text.hasSuffix("\n") { lines[lines.count - 1] = "" }
        return lines.joined(separator: "\n")
    }
}
