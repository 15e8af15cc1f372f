import Foundation
import WalletVault

/// `walletvault watch`: brings in each change as another device saves it, one line each, until interrupted.
enum WatchCommand {
    static let spec = CommandSpec(
        name: "watch",
        usage: ["watch [--keep local|cloud|merge]"],
        summary: "Follow the server: take in each change another device saves as it arrives, until Ctrl-C.",
        details: """
            Syncs once, then waits on the server (a long-poll) and syncs again whenever another device saves, printing
            one line per change as `sync` does (nothing while nothing changes). Local edits are never overwritten; the
            same item changed on both sides is decided as `sync` decides it (at a terminal you choose; otherwise it
            exits 3 unless --keep says which side wins). A lost network or a failing server is retried with a pause
            growing from 1 s to 60 s. Ctrl-C stops it (exit 130).
            Example: walletvault watch
            """,
        arguments: .init(valueOptions: ["--keep"]),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        let session = try context.syncingSession(command: "watch")
        let engine = session.engine
        let terminal = context.terminal
        terminal.note("Watching for changes; Ctrl-C stops.")
        let watching = Task {
            for try await report in engine.changes() { terminal.line(DeviceSession.describe(report)) }
        }
        let interruption = InterruptionGuard(stop: { watching.cancel() }, cleanup: {})
        defer { interruption.disarm() }
        let outcome = await watching.result
        if interruption.fired {
            // The guard exits 130 once told that nothing is written any more.
            interruption.settled()
            while true { sleep(1) }
        }
        if case .failure(let error) = outcome {
            throw (error as? SyncError).map(session.translate) ?? CLIError(.server, "watch: \(error)")
        }
    }
}
