import Foundation
import WalletVault

/// `walletvault devices`: the vault's entries (devices, recovery code, passphrase) and the key-health warning.
enum DevicesCommand {
    static let spec = CommandSpec(
        name: "devices",
        usage: ["devices [--offline]"],
        summary: "List the vault's entries (label, alg, created) and warn when too few ways in remain.",
        details: """
            Syncs first (--offline lists the last synced version). `*` marks this device's entry. The KEK_ID column is
            what `revoke` takes (a unique prefix is enough). The vault fingerprint (epoch and newest version) is the same
            on every device that read the same version of one history: compare it between two devices after a revocation.
            Example: walletvault devices
            """,
        arguments: .init(flags: ["--offline"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        _ = try context.arguments.requirePositionals(0, "", command: "devices")
        let session = try context.session()
        try session.requireUsableKey()
        if !context.arguments.has("--offline") {
            do {
                _ = try await ProgressIndicator.during("Syncing", terminal: context.terminal) { () async throws(SyncError) in
                    try await session.engine.sync()
                }
            } catch  where error.code == .unresolvedConflict {
                // The entries do not depend on the conflicting items; list the last synced ones.
                context.terminal.note("walletvault: note: unsynced conflicting edits; listing the last synced entries")
            } catch {
                throw session.translate(error)
            }
        }
        let entries: [DeviceEntry]
        let health: KeyHealth
        let fingerprint: String?
        do {
            entries = try await session.engine.devices()
            health = try await session.engine.keyHealth()
            fingerprint = try await session.engine.vaultFingerprint()
        } catch {
            throw session.translate(error)
        }
        let idWidth = max(6, entries.map(\.kekID.count).max() ?? 0)
        let labelWidth = max(5, entries.map(\.label.count).max() ?? 0)
        let recovery = RecoveryEntries(blob: session.store.syncedBlob())
        let kind = { (entry: DeviceEntry) in recovery.kinds[entry.kekID].map { "\(entry.algorithm) (\($0.rawValue))" } ?? entry.algorithm }
        let algWidth = max(3, entries.map { kind($0).count }.max() ?? 0)
        let terminal = context.terminal
        terminal.line("  " + pad("KEK_ID", idWidth) + "  " + pad("LABEL", labelWidth) + "  " + pad("ALG", algWidth) + "  CREATED")
        for entry in entries {
            terminal.line(
                (entry.isThisDevice ? "* " : "  ") + pad(entry.kekID, idWidth) + "  " + pad(entry.label, labelWidth) + "  "
                    + pad(kind(entry), algWidth) + "  " + (entry.created?.description ?? "-"))
        }
        terminal.line("\(health.deviceKeys) device key(s), \(health.recoveryPaths) recovery path(s).")
        if let fingerprint { terminal.line("Vault fingerprint (the same on every device in the vault): \(fingerprint)") }
        if let warning = health.warning { terminal.line("warning: \(warning)") }
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
