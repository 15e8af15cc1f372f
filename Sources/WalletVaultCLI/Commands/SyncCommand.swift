import WalletVault

/// `walletvault sync`: one sync round trip, asking at a terminal when the same items changed on both sides.
enum SyncCommand {
    static let spec = CommandSpec(
        name: "sync",
        usage: ["sync [--keep local|cloud|merge]"],
        summary: "Bring this device and the server in step; on a conflict ask which side to keep.",
        details: """
            Restores newer server content, saves local edits, and merges edits to different items silently. When the
            same item changed here and on another device: at a terminal you choose local, cloud or merge (the later
            change wins per item); otherwise it exits 3 and keeps your edits until `sync --keep local|cloud|merge`.
            Exits 5 when the server's hourly save limit is hit (edits stay here).
            Example: walletvault sync --keep merge
            """,
        arguments: .init(valueOptions: ["--keep"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        let session = try context.syncingSession(command: "sync")
        let report = try await session.run("Syncing") { engine async throws(SyncError) in try await engine.sync() }
        context.terminal.line(DeviceSession.describe(try session.requireSaved(report)))
    }
}
