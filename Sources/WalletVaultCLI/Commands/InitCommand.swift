import Foundation
import VaultEnvelope
import WalletVault

/// `walletvault init`: creates the vault with this device's key, a recovery code shown once, and an optional passphrase.
enum InitCommand {
    static let spec = CommandSpec(
        name: "init",
        usage: ["init [--passphrase | --passphrase-file FILE]"],
        summary: "Create the vault: this device's key, a recovery code shown once, an optional passphrase.",
        details: """
            The device key is a software P-256 key in the profile (mode 0600). The recovery code opens the vault when
            every device is lost; it is printed once and never stored. --passphrase asks for a passphrase twice at the
            terminal (--passphrase-file reads its first line) and adds an Argon2id-protected entry.
            Fails with exit 8 when the account already has a vault: pair or recover instead.
            Example: walletvault init --passphrase
            """,
        arguments: .init(valueOptions: ["--passphrase-file"], flags: ["--passphrase"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        _ = try context.arguments.requirePositionals(0, "", command: "init")
        let session = try context.session()
        guard !context.home.holdsVault else {
            throw CLIError(.vaultState, "this profile already holds the vault: use `walletvault sync`, or another --home for a new one")
        }
        let code = try NewRecoveryCode()
        var recoveryPaths: [(key: any KeyWrapping, label: String)] = [code.path]
        var withPassphrase = false
        if context.arguments.has("--passphrase") || context.arguments[option: "--passphrase-file"] != nil {
            let passphrase = try SecretReader(terminal: context.terminal).newPassphrase(
                file: context.arguments[option: "--passphrase-file"])
            let key = try await PassphraseKeys.derive(passphrase, terminal: context.terminal)
            recoveryPaths.append((key, "Passphrase"))
            withPassphrase = true
        }
        let report: SyncReport
        do {
            report = try await ProgressIndicator.during("Creating the vault", terminal: context.terminal) { () async throws(SyncError) in
                try await session.engine.createVault(recoveryPaths: recoveryPaths)
            }
        } catch {
            if case .conflict? = error.backupError {
                throw CLIError(
                    .vaultState,
                    "this account already has a vault: on this device run `walletvault pair request` "
                        + "(and approve it on a device that has the vault) or `walletvault recover --code`")
            }
            throw session.translate(error)
        }
        let terminal = context.terminal
        terminal.line(DeviceSession.describe(report))
        terminal.line("This device is \"\(session.profile.label)\", key \(session.store.deviceKeyID() ?? "?").")
        if withPassphrase { terminal.line("A passphrase entry was added: `walletvault recover --passphrase` opens the vault with it.") }
        code.show(on: terminal)
    }
}
