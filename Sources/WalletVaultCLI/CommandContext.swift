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
}
