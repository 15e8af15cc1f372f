/// Where a command writes and asks: the process's terminal, or the demo's narrated capture.
///
/// Prompts and progress go to the error stream so that the output stream stays clean for pipes
/// (`walletvault pull | jq`).
public protocol Terminal: Sendable {
    /// Whether a person can answer prompts (standard input is a terminal).
    var isInteractive: Bool { get }
    /// Whether progress may be drawn (standard error is a terminal).
    var showsProgress: Bool { get }
    /// Writes to the output stream; `text` carries its own newlines.
    func write(_ text: String)
    /// Writes to the error stream; `text` carries its own newlines.
    func writeError(_ text: String)
    /// Shows `prompt` and reads one line, nil at end of input.
    func readLine(prompt: String) -> String?
    /// Shows `prompt` and reads one line without echoing it, nil at end of input or without a terminal.
    func readSecret(prompt: String) -> String?
}

extension Terminal {
    /// Writes one line to the output stream.
    func line(_ text: String = "") { write(text + "\n") }
    /// Writes one line to the error stream.
    func note(_ text: String) { writeError(text + "\n") }
}
