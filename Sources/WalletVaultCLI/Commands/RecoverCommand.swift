import Foundation
import VaultEnvelope
import WalletVault

/// `walletvault recover`: opens the vault with the recovery code or passphrase on a device without a working key.
enum RecoverCommand {
    static let spec = CommandSpec(
        name: "recover",
        usage: ["recover --code [--code-file FILE]", "recover --passphrase [--passphrase-file FILE]"],
        summary: "Open the vault with the recovery code or passphrase and enroll this device with a new key.",
        details: """
            For a new device when every other is lost, or this device's key was invalidated. The secret is asked at
            the terminal without echo, or read from the first line of --code-file / --passphrase-file (a file only you
            can read) — never from the command line. This device gets a fresh key; its old, dead entry is removed.
            A wrong secret exits 4; a mistyped code exits 1 and names the groups that do not check.
            Example: walletvault recover --code
            """,
        arguments: .init(valueOptions: ["--code-file", "--passphrase-file"], flags: ["--code", "--passphrase"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        guard context.arguments.positionals.isEmpty else {
            // Not echoed: an extra argument here is most likely the secret itself.
            throw CLIError.usage(
                "recover takes no arguments; secrets are never read from the command line: "
                    + "use --code (asks without echo) or --code-file FILE", command: "recover")
        }
        let arguments = context.arguments
        let byCode = arguments.has("--code") || arguments[option: "--code-file"] != nil
        let byPassphrase = arguments.has("--passphrase") || arguments[option: "--passphrase-file"] != nil
        guard byCode != byPassphrase else {
            throw CLIError.usage(
                "say which secret: --code (or --code-file FILE) or --passphrase (or --passphrase-file FILE)",
                command: "recover")
        }
        let session = try context.session()
        guard let snapshot = try await session.loadBlob() else {
            throw CLIError(.vaultState, "no vault is stored for this account: nothing to recover (run `walletvault init` to start one)")
        }
        let envelope: VaultEnvelope
        do { envelope = try VaultEnvelope(parsing: snapshot.blob) } catch { throw CLIError.from(error) }
        let reader = SecretReader(terminal: context.terminal)
        let key: any KeyEncryptionKey
        if byCode {
            key = try recoveryCodeKey(
                reader.read(file: arguments[option: "--code-file"], prompt: "Recovery code: ", fileOption: "--code-file"))
            // A well-formed code of another vault (or an old, replaced code) has no entry here.
            guard envelope.entries.contains(where: { $0.kekID == key.kekID }) else {
                throw CLIError(
                    .noAccess,
                    "this recovery code does not open the vault: check it is this account's current code, "
                        + "or recover with `--passphrase` or by pairing")
            }
        } else {
            let passphrase = try reader.read(
                file: arguments[option: "--passphrase-file"], prompt: "Passphrase: ", fileOption: "--passphrase-file")
            key = try await PassphraseKeys.unlock(passphrase, in: envelope, terminal: context.terminal)
        }
        let deadKey = session.store.deviceKeyID().flatMap { id in envelope.entries.contains { $0.kekID == id } ? id : nil }
        let report = try await session.run("Recovering") { engine async throws(SyncError) in try await engine.recover(with: key) }
        try session.requireSaved(report)
        let items = (try? await session.engine.document()?.liveValues.count) ?? 0
        let terminal = context.terminal
        terminal.line(
            "Recovered: \(items) item(s); this device \"\(session.profile.label)\" has a new key \(session.store.deviceKeyID() ?? "?").")
        if let deadKey { terminal.line("Its previous key \(deadKey) was removed from the vault.") }
        if let warning = try? await session.engine.keyHealth().warning { terminal.line("warning: \(warning)") }
    }

    /// The key for a typed or filed recovery code.
    ///
    /// - Throws: `CLIError` `.usage` for a mistyped code.
    static func recoveryCodeKey(_ text: String) throws(CLIError) -> RecoveryCodeKEK {
        do { return try RecoveryCodeKEK(code: try RecoveryCode(parsing: text)) } catch { throw CLIError.from(error) }
    }
}
