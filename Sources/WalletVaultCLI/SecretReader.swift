import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads secrets (recovery codes, passphrases) from a file or from the terminal without echo — never from the
/// command line, where other users of the machine can read them in the process list.
struct SecretReader {
    let terminal: any Terminal

    /// The secret in `file` (its first line), or asked at the terminal.
    ///
    /// - Throws: `CLIError` `.usage` when there is neither a file nor a terminal, or the answer is empty.
    func read(file: String?, prompt: String, fileOption: String) throws(CLIError) -> String {
        if let file { return try fromFile(file, option: fileOption) }
        guard terminal.isInteractive, let answer = terminal.readSecret(prompt: prompt) else {
            throw CLIError(.usage, "no terminal to ask for the secret: pass \(fileOption) FILE (a file only you can read)")
        }
        let trimmed = answer.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw CLIError(.usage, "nothing was entered") }
        return trimmed
    }

    /// A new passphrase: from a file, or typed twice at the terminal.
    ///
    /// - Throws: `CLIError` `.usage` for a mismatch, a short passphrase, or no way to ask.
    func newPassphrase(file: String?) throws(CLIError) -> String {
        let passphrase = try read(file: file, prompt: "New passphrase: ", fileOption: "--passphrase-file")
        if file == nil {
            let again = try read(file: nil, prompt: "Repeat it: ", fileOption: "--passphrase-file")
            guard again == passphrase else { throw CLIError(.usage, "the two passphrases differ: run the command again") }
        }
        guard passphrase.count >= 8 else { throw CLIError(.usage, "a passphrase needs at least 8 characters: choose a longer one") }
        return passphrase
    }

    private func fromFile(_ path: String, option: String) throws(CLIError) -> String {
        if path != "-", let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0
        {
            terminal.note("walletvault: warning: \(path) is readable by other users; `chmod 600 \(path)`")
        }
        let text = String(decoding: try FileWriter.read(path), as: UTF8.self)
        guard
            let first = text.split(whereSeparator: \.isNewline).first.map(String.init)?
                .trimmingCharacters(in: .whitespaces), !first.isEmpty
        else { throw CLIError(.usage, "\(path) is empty: it must hold the secret on its first line (\(option))") }
        return first
    }
}
