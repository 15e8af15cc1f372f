import Foundation
import Synchronization

/// The built `walletvault` binary left running for a test to signal: standard output collected as it arrives,
/// standard error drained, no terminal (standard input is /dev/null).
final class RunningCLIProcess {
    let process = Process()
    /// Standard error, read to its end once the process exits.
    let errors: CLIProcess.Reader
    private let output = Pipe()
    private let collected = Collected()

    /// The bytes read so far, shared with the pipe's reading handler.
    private final class Collected: Sendable {
        let bytes = Mutex(Data())
    }

    /// Starts `walletvault` with `arguments` and `environment` added to this process's.
    ///
    /// - Throws: what `Process.run` throws.
    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = CLIProcess.binary("walletvault")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let errorPipe = Pipe()
        process.standardOutput = output
        process.standardError = errorPipe
        process.standardInput = FileHandle.nullDevice
        output.fileHandleForReading.readabilityHandler = { [collected] handle in
            let chunk = handle.availableData
            collected.bytes.withLock { $0.append(chunk) }
        }
        try process.run()
        errors = CLIProcess.Reader(errorPipe.fileHandleForReading)
    }

    /// Standard output so far.
    func text() -> String { String(decoding: collected.bytes.withLock { $0 }, as: UTF8.self) }

    /// Waits up to `seconds` for the process to exit (then terminates it) and returns all of standard output.
    func finish(within seconds: Double) -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        return text() + String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}
