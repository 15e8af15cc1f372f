import WalletVault

/// `walletvault history`: the versions the server keeps, newest first, for `restore`.
enum HistoryCommand {
    static let spec = CommandSpec(
        name: "history",
        usage: ["history"],
        summary: "List the versions the server keeps (newest first), for `walletvault restore`.",
        details: """
            One line per kept version: its SYNC_ID, size, the time its writer stated and the writing device's label.
            `*` marks the version this device last synced. The server keeps the last `history_versions` (default 10).
            Example: walletvault history
            """,
        arguments: .init(),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        _ = try context.arguments.requirePositionals(0, "", command: "history")
        let session = try context.session()
        let versions = try await session.run("Listing versions") { engine async throws(SyncError) in try await engine.history() }
        guard !versions.isEmpty else {
            throw CLIError(.vaultState, "no vault is stored for this account: run `walletvault init` on the first device")
        }
        let current = await session.engine.status().syncedVersion
        let terminal = context.terminal
        terminal.line("  SYNC_ID                   BYTES     UPDATED                   DEVICE")
        for version in versions {
            let marker = version.syncID == current ? "*" : " "
            terminal.line(
                "\(marker) \(pad(version.syncID, 25)) \(pad(String(version.bytes), 9)) \(pad(version.updatedUtc, 25)) "
                    + (version.hint ?? "-"))
        }
        terminal.line("\(versions.count) version(s). `walletvault restore SYNC_ID` saves an older one again as the newest.")
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
