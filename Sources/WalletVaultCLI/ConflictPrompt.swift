import Foundation
import WalletVault

/// Decides a sync conflict: from `--keep`, or by asking at the terminal; with neither, the engine reports the
/// conflict and the command exits with `ExitCode.conflict`.
enum ConflictPrompt {
    /// The `--keep` values.
    static let choices: [String: ConflictResolution] = ["local": .keepLocal, "cloud": .keepCloud, "merge": .merge]

    /// The handler for a command's `--keep` option and terminal.
    ///
    /// - Throws: `CLIError` `.usage` for an unknown `--keep` value.
    static func handler(keep: String?, terminal: any Terminal) throws(CLIError) -> VaultSyncEngine.ConflictHandler? {
        if let keep {
            guard let choice = choices[keep] else { throw CLIError.usage("--keep takes local, cloud or merge", command: "sync") }
            return { _ in choice }
        }
        guard terminal.isInteractive else { return nil }
        return { context in ProgressIndicator.pausedForPrompt(terminal) { ask(context, terminal: terminal) } }
    }

    private static func ask(_ context: ConflictContext, terminal: any Terminal) -> ConflictResolution {
        terminal.note("Changed both here and on another device: \(context.conflictingItems.joined(separator: ", "))")
        terminal.note(
            "  this device edited at \(context.localUpdated.description), the server's copy is from \(context.cloudUpdated.description)")
        while true {
            let answer = terminal.readLine(prompt: "Keep [l]ocal, keep [c]loud, or [m]erge (the later change wins)? ")?
                .trimmingCharacters(in: .whitespaces).lowercased()
            switch answer {
            case "l", "local": return .keepLocal
            case "c", "cloud": return .keepCloud
            case "m", "merge": return .merge
            case nil:
                // End of input is no decision; every choice would drop one side's value, so stop before saving
                // anything. The working copy (with this device's edits) is already on disk.
                terminal.note("walletvault: no decision, nothing saved: run `walletvault sync` again, or with --keep")
                exit(ExitCode.conflict.rawValue)
            default: terminal.note("Type l, c or m.")
            }
        }
    }
}
