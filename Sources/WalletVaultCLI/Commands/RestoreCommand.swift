import WalletVault

/// `walletvault restore SYNC_ID`: saves a kept older version's content again as the newest version.
enum RestoreCommand {
    static let spec = CommandSpec(
        name: "restore",
        usage: ["restore SYNC_ID"],
        summary: "Save the content of an older kept version (from `history`) again as the newest version.",
        details: """
            Syncs first (edits here are saved, so they stay in the history), then opens the old version, writes its
            items over the current ones (items it lacks are deleted) and saves the result as a new version: every
            device takes it as the newest content, and nothing is lost from the history. The save names the current
            version, so when another device saves at the same moment it fails (exit 2) instead of overwriting: run it
            again. A version saved before this device joined cannot be opened here (exit 4).
            Example: walletvault restore 2026-11-30T07:35:08.851Z
            """,
        arguments: .init(valueOptions: ["--keep"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        let syncID = try context.arguments.requirePositionals(1, "SYNC_ID", command: "restore")[0]
        let session = try context.session(decidingConflicts: true)
        try session.requireUsableKey()
        let report = try await session.run("Restoring") { engine async throws(SyncError) in try await engine.restoreVersion(syncID) }
        context.terminal.line(DeviceSession.describe(try session.requireSaved(report)))
    }
}
