import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `walletvault demo`: a dev server on a free loopback port and two devices walking through the whole story.
enum DemoCommand {
    static let spec = CommandSpec(
        name: "demo",
        usage: ["demo"],
        summary: "Start a dev server and walk two devices through create, pair, merge, conflict, recovery and revocation.",
        details: """
            Starts `walletvault-server --dev` (found next to this executable, or $WALLETVAULT_SERVER_BIN) on a free
            loopback port with its data in a temporary directory, then runs the real commands for two profiles, A and
            B, printing each command and its output with short narration. It stops the server and removes the
            directory at the end (also on Ctrl-C): nothing is left running. Needs no profile.
            Example: walletvault demo
            """,
        arguments: .init(),
        run: run)

    static func run(_ context: CommandContext) async throws(CLIError) {
        _ = try context.arguments.requirePositionals(0, "", command: "demo")
        let terminal = context.terminal
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("walletvault-demo-\(UUID().uuidString.prefix(8))")
        do {
            try FileManager.default.createDirectory(at: workspace.appendingPathComponent("server"), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw CLIError(.localStorage, "cannot create \(workspace.path): check the temporary directory ($TMPDIR)")
        }
        defer { try? FileManager.default.removeItem(at: workspace) }
        terminal.line("WalletVault demo: one account, two devices (A and B), end-to-end encrypted through a server that")
        terminal.line("never sees a key. $DEMO below is \(workspace.path).")
        terminal.line("")
        let server: DevServer
        do {
            server = try await ProgressIndicator.during("Starting the development server", terminal: terminal) { () throws(CLIError) in
                try DevServer(dataDirectory: workspace.appendingPathComponent("server"))
            }
        } catch {
            throw error
        }
        let interruption = InterruptionGuard { [workspace] in
            server.stop()
            try? FileManager.default.removeItem(at: workspace)
            terminal.note("\nwalletvault: demo interrupted; server stopped, files removed")
        }
        defer {
            interruption.disarm()
            server.stop()
        }
        terminal.line("Started a development server, pid \(server.processID), on \(server.baseURL.absoluteString).")
        try await DemoScript(terminal: terminal, workspace: workspace, server: server.baseURL).play()
        server.stop()
        terminal.line("")
        terminal.line("Stopped the server (pid \(server.processID) has exited) and removed $DEMO. Nothing is left running.")
    }
}
