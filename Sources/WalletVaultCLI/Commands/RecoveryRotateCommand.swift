import Foundation
import VaultEnvelope
import WalletVault

/// `walletvault recovery rotate`: a new recovery code in place of every recovery code and passphrase entry.
enum RecoveryRotateCommand {
    static let spec = CommandSpec(
        name: "recovery rotate",
        usage: ["recovery rotate"],
        summary: "Replace the recovery code (and any passphrase) by a new recovery code, shown once.",
        details: """
            Removes every recovery-code and passphrase entry, enrolls a new recovery code, and rotates the data key
            and the vault secret in one save, so that whoever knew the old code or passphrase (a revoked device that
            saw it, someone who read the paper) opens nothing saved from now on. Versions saved before stay readable
            with the old code for as long as the server keeps them. The new code is printed once.
            Example: walletvault recovery rotate
            """,
        arguments: .init(),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        _ = try context.arguments.requirePositionals(0, "", command: "recovery rotate")
        let session = try context.session()
        try session.requireUsableKey()
        let code = try NewRecoveryCode()
        let report = try await session.run("Replacing the recovery code") { engine async throws(SyncError) in
            try await engine.replaceRecoveryPaths(with: [code.path])
        }
        try session.requireSaved(report)
        context.terminal.line("The vault has a new data key and a new recovery code; every device is still in.")
        code.show(on: context.terminal, replacing: true)
    }
}
