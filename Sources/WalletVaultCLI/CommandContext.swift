import Foundation
import WalletVault

/// What every command gets: its parsed arguments, the terminal, and the profile directory.
struct CommandContext: Sendable {
    /// The command's own arguments.
    let arguments: ParsedArguments
    /// Where to write and ask.
    let terminal: any Terminal
    /// The profile directory (`--home`).
    let home: ProfileHome

    /// A session on the logged-in profile, deciding conflicts by `--keep` or at the terminal.
    func session(decidingConflicts: Bool = false) throws(CLIError) -> DeviceSession {
        let handler = decidingConflicts ? try ConflictPrompt.handler(keep: arguments[option: "--keep"], terminal: terminal) : nil
        return try DeviceSession(home: home, terminal: terminal, conflictHandler: handler)
    }

    /// The session of a command that takes no positionals, decides conflicts and needs a usable key (`sync`, `watch`).
    func syncingSession(command: String) throws(CLIError) -> DeviceSession {
        _ = try arguments.requirePositionals(0, "", command: command)
        let session = try session(decidingConflicts: true)
        try session.requireUsableKey()
        return session
    }
}
