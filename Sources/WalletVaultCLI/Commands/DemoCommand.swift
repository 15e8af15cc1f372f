import Foundation
import Synchronization

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
            try FileManager.default.createDirectory(
                at: workspace.appendingPathComponent("server"), withIntermediateDirectories: true,
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
        let story = Mutex<Task<Void, any Error>?>(nil)
        let narration = SilenceableTerminal(base: terminal)
        let interruption = InterruptionGuard(
            stop: {
                narration.silence()
                story.withLock { $0?.cancel() }
                server.stop()
            },
            cleanup: { [workspace] in
                try? FileManager.default.removeItem(at: workspace)
                terminal.note("\nwalletvault: demo interrupted; server stopped, files removed")
            })
        defer {
            interruption.disarm()
            server.stop()
        }
        terminal.line("Started a development server, pid \(server.processID), on \(server.baseURL.absoluteString).")
        let task = Task { try await DemoScript(terminal: narration, workspace: workspace, server: server.baseURL).play() }
        story.withLock { $0 = task }
        let outcome = await task.result
        if interruption.fired {
            // The guard removes the files and exits 130 now that nothing writes to them any more.
            interruption.settled()
            while true { sleep(1) }
        }
        if case .failure(let error) = outcome { throw (error as? CLIError) ?? CLIError(.server, "demo: \(error)") }
        server.stop()
        terminal.line("")
        terminal.line("Stopped the server (pid \(server.processID) has exited) and removed $DEMO. Nothing is left running.")
    }
}
