import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Ctrl-C, SIGTERM or SIGHUP during `walletvault demo`: it stops at once, removes its directory, stops its server
/// and exits 130, with a message that is true.
@Suite("walletvault demo, interrupted")
struct DemoInterruptionTests {
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
    func aSignalStopsTheDemoCleanly(_ signalNumber: Int32) throws {
        let demo = try RunningCLIProcess(
            ["demo"], environment: ["WALLETVAULT_SERVER_BIN": CLIProcess.binary("walletvault-server").path])
        let process = demo.process
        func text() -> String { demo.text() }
        // Signal in the middle of the story: once step 2 has begun.
        let deadline = Date().addingTimeInterval(60)
        while !text().contains("── Step 2."), process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        try #require(process.isRunning, "the demo ended before it could be interrupted: \(text())")
        kill(process.processIdentifier, signalNumber)
        let output = demo.finish(within: 20)
        let messages = demo.errors.wait()

        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "exit \(process.terminationStatus): \(messages)")
        #expect(messages.contains("demo interrupted; server stopped, files removed"))
        #expect(!output.contains("── Step 4."), "the story went on after the signal")
        #expect(!(output + messages).contains("cannot be reached"), "a step ran against the stopped server")
        let workspace = try #require(
            output.range(of: #"/[^ ]*walletvault-demo-[0-9A-F]+"#, options: .regularExpression).map { String(output[$0]) })
        #expect(!FileManager.default.fileExists(atPath: workspace), "\(workspace) was left behind")
        let pidText = try #require(output.range(of: #"pid [0-9]+"#, options: .regularExpression).map { output[$0].dropFirst(4) })
        let pid = try #require(Int32(pidText))
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "server pid \(pid) still exists")
    }
}
