import Foundation
import VaultEnvelope
import WalletVault

/// `walletvault revoke KEK_ID`: removes an entry and rotates the DEK so the revoked key opens nothing saved after.
enum RevokeCommand {
    static let spec = CommandSpec(
        name: "revoke",
        usage: ["revoke KEK_ID [--new-recovery-code | --code-file FILE] [--passphrase-file FILE] [--drop-recovery]"],
        summary: "Remove a device (or recovery entry) and rotate the data key.",
        details: """
            KEK_ID is from `walletvault devices` (a unique prefix is enough). The vault gets a new data key, wrapped for
            every remaining device. A recovery code or passphrase entry survives only if its secret is offered: it is
            asked at the terminal (Enter drops it), or read from --code-file / --passphrase-file; without a terminal
            pass those files or --drop-recovery. The output names every entry dropped.
            --new-recovery-code replaces every recovery code and passphrase entry by a new recovery code in the same
            save and prints it once: use it when the revoked device ever saw the code (init prints it; recover and
            revoke ask for it), or it still opens every later version.
            Example: walletvault revoke Qx4h7 --new-recovery-code
            """,
        arguments: .init(valueOptions: ["--code-file", "--passphrase-file"], flags: ["--drop-recovery", "--new-recovery-code"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        let given = try context.arguments.requirePositionals(1, "KEK_ID", command: "revoke")[0]
        let session = try context.session()
        try session.requireUsableKey()
        let terminal = context.terminal
        _ = try await session.run("Syncing") { engine async throws(SyncError) in try await engine.sync() }
        let entries: [DeviceEntry]
        do { entries = try await session.engine.devices() } catch { throw session.translate(error) }
        let matches =
            entries.filter { $0.kekID == given }
            + (entries.contains { $0.kekID == given } ? [] : entries.filter { $0.kekID.hasPrefix(given) })
        guard matches.count == 1, let target = matches.first, given.count >= 4 || target.kekID == given else {
            throw CLIError(
                .usage,
                matches.isEmpty
                    ? "no entry \(given) in the vault: `walletvault devices` lists them"
                    : "\(given) matches \(matches.count) entries: give more of the KEK_ID")
        }
        guard !target.isThisDevice else {
            throw CLIError(.usage, "\(target.kekID) is this device's own key: revoke it from another device")
        }
        let newCode = context.arguments.has("--new-recovery-code") ? try NewRecoveryCode() : nil
        let additional =
            newCode == nil
            ? try await recoveryKeys(RecoveryEntries(blob: session.store.syncedBlob()), keeping: target.kekID, context: context) : []
        let report = try await session.run("Rotating the data key") { engine async throws(SyncError) in
            try await engine.revoke(kekID: target.kekID, additionalKeys: additional, newRecoveryPaths: newCode.map { [$0.path] })
        }
        try session.requireSaved(report)
        terminal.line("Revoked \"\(target.label)\" (\(target.kekID)); the vault has a new data key.")
        let remaining = (try? await session.engine.devices()) ?? []
        terminal.line("Wrapped for: " + remaining.map { "\"\($0.label)\"" }.joined(separator: ", ") + ".")
        if case .rotated(_, let skipped) = report, !skipped.isEmpty {
            for entry in skipped {
                terminal.line("Dropped \"\(entry.label)\" (\(entry.kekID)): \(reason(entry.reason)).")
            }
        } else {
            terminal.line("No other entry was dropped.")
        }
        if let warning = try? await session.engine.keyHealth().warning { terminal.line("warning: \(warning)") }
        newCode?.show(on: terminal, replacing: true)
    }

    /// The recovery secrets to offer so their entries survive the rotation.
    private static func recoveryKeys(_ recovery: RecoveryEntries, keeping revoked: String, context: CommandContext)
        async throws(CLIError) -> [any KeyWrapping]
    {
        let arguments = context.arguments
        let terminal = context.terminal
        let reader = SecretReader(terminal: terminal)
        var keys: [any KeyWrapping] = []
        let codeEntries = recovery.ids(.recoveryCode).filter { $0 != revoked }
        let passphraseEntries = recovery.ids(.passphrase).filter { $0 != revoked }
        if !codeEntries.isEmpty {
            if let file = arguments[option: "--code-file"] {
                keys.append(
                    try matching(
                        RecoverCommand.recoveryCodeKey(reader.read(file: file, prompt: "", fileOption: "--code-file")),
                        in: codeEntries, what: "recovery code"))
            } else if terminal.isInteractive, !arguments.has("--drop-recovery") {
                let typed =
                    terminal.readSecret(prompt: "Recovery code (keeps its entry; Enter drops it): ")?
                    .trimmingCharacters(in: .whitespaces) ?? ""
                if !typed.isEmpty {
                    keys.append(try matching(RecoverCommand.recoveryCodeKey(typed), in: codeEntries, what: "recovery code"))
                }
            } else if !arguments.has("--drop-recovery") {
                throw CLIError.usage(
                    "the recovery code entry survives the rotation only if the code is offered: "
                        + "pass --code-file FILE, or --drop-recovery", command: "revoke")
            }
        }
        if !passphraseEntries.isEmpty, let envelope = recovery.envelope {
            var passphrase: String?
            if let file = arguments[option: "--passphrase-file"] {
                passphrase = try reader.read(file: file, prompt: "", fileOption: "--passphrase-file")
            } else if terminal.isInteractive, !arguments.has("--drop-recovery") {
                passphrase = terminal.readSecret(prompt: "Passphrase (keeps its entry; Enter drops it): ").flatMap { $0.isEmpty ? nil : $0 }
            } else if !arguments.has("--drop-recovery") {
                throw CLIError.usage(
                    "the passphrase entry survives the rotation only if the passphrase is offered: "
                        + "pass --passphrase-file FILE, or --drop-recovery", command: "revoke")
            }
            if let passphrase { keys.append(try await PassphraseKeys.unlock(passphrase, in: envelope, terminal: terminal)) }
        }
        return keys
    }

    private static func matching(_ key: RecoveryCodeKEK, in ids: [String], what: String) throws(CLIError) -> RecoveryCodeKEK {
        guard ids.contains(key.kekID) else {
            throw CLIError(.noAccess, "that \(what) is not this vault's: check it, or pass --drop-recovery to drop the entry")
        }
        return key
    }

    private static func reason(_ reason: DEKRotation.Reason) -> String {
        switch reason {
        case .keyNotAvailable: "its secret was not offered, so it cannot open anything saved from now on"
        case .needsHolder: "its holder was not asked"
        case .failed(let code): "wrapping failed (\(code.rawValue))"
        }
    }
}
