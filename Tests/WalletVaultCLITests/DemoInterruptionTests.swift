import Foundation
import Synchronization
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
        let process = Process()
        process.executableURL = CLIProcess.binary("walletvault")
        process.arguments = ["demo"]
        var environment = ProcessInfo.processInfo.environment
        environment["WALLETVAULT_SERVER_BIN"] = CLIProcess.binary("walletvault-server").path
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let stdout = Mutex(Data())
        out.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            stdout.withLock { $0.append(chunk) }
        }
        try process.run()
        let errors = CLIProcess.Reader(err.fileHandleForReading)
        func text() -> String { String(decoding: stdout.withLock { $0 }, as: UTF8.self) }
        // Signal in the middle of the story: once step 2 has begun.
        let deadline = Date().addingTimeInterval(60)
        while !text().contains("── Step 2."), process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        try #require(process.isRunning, "the demo ended before it could be interrupted: \(text())")
        kill(process.processIdentifier, signalNumber)
        let exitDeadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < exitDeadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        out.fileHandleForReading.readabilityHandler = nil
        let output = text() + String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let messages = errors.wait()

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
