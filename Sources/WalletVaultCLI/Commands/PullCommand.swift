import Foundation
import VaultCore
import WalletVault

/// `walletvault pull`: syncs, then writes the vault's items as JSON.
enum PullCommand {
    static let spec = CommandSpec(
        name: "pull",
        usage: ["pull [--out FILE] [--item NAME] [--keep local|cloud|merge]"],
        summary: "Sync, then write the vault's items as a JSON object (to standard output, or --out FILE).",
        details: """
            Writes a JSON object of the live items, sorted by name, the shape `push` reads back. With --item NAME only
            that item: text items as their text, others as JSON. --out FILE is written with mode 0600; without it the
            items go to standard output and the sync's report to standard error.
            On a newly paired or recovered device the first pull restores the vault.
            Example: walletvault pull --out vault.json
            """,
        arguments: .init(valueOptions: ["--out", "--item", "--keep"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        _ = try context.arguments.requirePositionals(0, "", command: "pull")
        let session = try context.session(decidingConflicts: true)
        try session.requireUsableKey()
        let out = context.arguments[option: "--out"]
        let report = try await session.run("Syncing") { engine async throws(SyncError) in try await engine.sync() }
        // Rate-limited is not a failure for reading: the local copy is authoritative and complete.
        let describe = DeviceSession.describe(report)
        if out == nil { context.terminal.note(describe) } else { context.terminal.line(describe) }
        let values: [String: JSONValue]
        do { values = try await session.engine.document()?.liveValues ?? [:] } catch { throw session.translate(error) }
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
