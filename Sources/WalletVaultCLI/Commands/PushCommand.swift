import Foundation
import VaultCore
import WalletVault

/// `walletvault push FILE`: makes the vault's items what the file says, then syncs.
enum PushCommand {
    static let spec = CommandSpec(
        name: "push",
        usage: ["push FILE [--keep local|cloud|merge]", "push --item NAME FILE [--keep local|cloud|merge]"],
        summary: "Set the vault's items from a JSON file (or one item from any file) and sync.",
        details: """
            FILE is the whole vault: a JSON object whose members are the items, the shape `pull` writes. Items whose
            value differs are set, items missing from the file are deleted, unchanged ones are not touched (so they
            never win a merge they had no part in). With --item NAME, FILE becomes that one item: its JSON value, or its
            text when it is not JSON; other items stay. FILE - reads standard input.
            The sync that follows merges with other devices' changes; see `sync` for --keep and conflicts (exit 3).
            Example: walletvault push vault.json
            """,
        arguments: .init(valueOptions: ["--item", "--keep"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        let path = try context.arguments.requirePositionals(1, "FILE", command: "push")[0]
        let session = try context.session(decidingConflicts: true)
        try session.requireUsableKey()
        let data = try FileWriter.read(path)
        let wanted: [(key: String, value: JSONValue)]
        let deleteMissing: Bool
        if let item = context.arguments[option: "--item"] {
            guard !item.isEmpty else { throw CLIError.usage("--item needs a name", command: "push") }
            wanted = [(item, try VaultFileMapping.itemValue(fromFile: data, name: path))]
            deleteMissing = false
        } else {
            wanted = try VaultFileMapping.items(fromVaultFile: data, name: path)
            deleteMissing = true
        }
        let document: VaultDocument?
        do { document = try await session.engine.document() } catch { throw session.translate(error) }
        guard let document else {
            throw CLIError(
                .vaultState,
                "this device holds no vault yet: run `walletvault init` (first device) or "
                    + "`walletvault pull` after pairing")
        }
        let change = VaultFileMapping.change(from: document.liveValues, to: wanted, deleteMissing: deleteMissing)
        if !change.isEmpty {
            let sets = change.updates
            let deletes = change.delete
            do {
                try await session.engine.edit { document, now in
                    for (id, value) in sets { document.set(id, to: value, at: now) }
                    for id in deletes { document.delete(id, at: now) }
                }
            } catch {
                throw session.translate(error)
            }
        }
        context.terminal.line(change.summary)
        let report = try await session.run("Syncing") { engine async throws(SyncError) in try await engine.sync() }
        context.terminal.line(DeviceSession.describe(try session.requireSaved(report)))
    }
}
