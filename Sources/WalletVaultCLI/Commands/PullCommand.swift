import Foundation
import VaultCore
import WalletVault

/// `walletvault pull`: syncs, then writes the vault's items as JSON.
enum PullCommand {
    static let spec = CommandSpec(
        name: "pull",
        usage: ["pull [--out FILE] [--item NAME] [--keep local|cloud|merge] [--offline]"],
        summary: "Sync, then write the vault's items as a JSON object (to standard output, or --out FILE).",
        details: """
            Writes a JSON object of the live items, sorted by name, the shape `push` reads back. With --item NAME only
            that item: text items as their text, others as JSON. --out FILE is written with mode 0600; without it the
            items go to standard output and the sync's report to standard error.
            On a newly paired or recovered device the first pull restores the vault. --offline skips the sync and
            writes this device's own copy (with its unsaved edits): for reading while the server is down or a
            conflict waits for a decision. When the hourly save limit keeps local edits from being saved, pull still
            writes everything and exits 0 (the note says so); push and sync exit 5.
            Example: walletvault pull --out vault.json
            """,
        arguments: .init(valueOptions: ["--out", "--item", "--keep"], flags: ["--offline"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        _ = try context.arguments.requirePositionals(0, "", command: "pull")
        let session = try context.session(decidingConflicts: true)
        // Reading this device's copy needs no device key (it is sealed under the at-rest key).
        if !context.arguments.has("--offline") { try session.requireUsableKey() }
        let out = context.arguments[option: "--out"]
        let describe: String
        if context.arguments.has("--offline") {
            describe = "Offline: this device's copy" + (await session.engine.status().hasLocalEdits ? ", with edits not yet saved." : ".")
        } else {
            let report: SyncReport
            do {
                report = try await session.run("Syncing") { engine async throws(SyncError) in try await engine.sync() }
            } catch  where [.server, .conflict].contains(error.exitCode) && session.store.syncedBlob() != nil {
                throw CLIError(error.exitCode, error.message + " (`walletvault pull --offline` writes this device's copy)")
            }
            // Rate-limited is not a failure for reading: the local copy is authoritative and complete.
            describe = DeviceSession.describe(report)
        }
        if out == nil { context.terminal.note(describe) } else { context.terminal.line(describe) }
        let document: VaultDocument?
        do { document = try await session.engine.document() } catch { throw session.translate(error) }
        guard let values = document?.liveValues else {
            throw CLIError(.vaultState, "no vault on this device yet: `walletvault pull` without --offline restores it, once paired")
        }
        let text: String
        if let item = context.arguments[option: "--item"] {
            guard let value = values[item] else {
                throw CLIError(.usage, "the vault has no item \"\(item)\": `walletvault pull` lists them all")
            }
            text = VaultFileMapping.render(item: value)
        } else {
            text = VaultFileMapping.render(values)
        }
        guard let out, out != "-" else {
            context.terminal.write(text)
            return
        }
        try FileWriter.writeAtomically(Data(text.utf8), to: URL(fileURLWithPath: out))
        context.terminal.line("Wrote \(context.arguments[option: "--item"] == nil ? "\(values.count) item(s)" : "the item") to \(out).")
    }
}
