import Foundation
import WalletVaultCLI

/// The built `walletvault` binary, run as a user would: arguments, no terminal (standard input is a pipe or
/// /dev/null), a bounded time, and both streams captured.
struct CLIProcess {
    struct Result {
        let code: Int32
        let stdout: String
        let stderr: String
        var all: String { stdout + stderr }
    }

    /// A binary built beside the test bundle, or named by an environment variable.
    static func binary(_ name: String) -> URL {
        let variable = name.uppercased().replacingOccurrences(of: "-", with: "_") + "_BIN"
        if let path = ProcessInfo.processInfo.environment[variable] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Runs `walletvault` with `arguments`; kills it after `timeoutSeconds`.
    static func run(
        _ arguments: [String], home: URL? = nil, stdin: Data? = nil, timeoutSeconds: Double = 90,
        environment: [String: String] = [:]
    ) throws -> Result {
        let process = Process()
        process.executableURL = binary("walletvault")
        process.arguments = (home.map { ["--home", $0.path] } ?? []) + arguments
        var env = ProcessInfo.processInfo.environment
        // Never touch the real user's profile, whatever a test forgets to pass.
        env["WALLETVAULT_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("wv-cli-nohome-\(UUID().uuidString)").path
        env["WALLETVAULT_SERVER_BIN"] = binary("walletvault-server").path
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        if let stdin {
            let input = Pipe()
            process.standardInput = input
            try process.run()
            input.fileHandleForWriting.write(stdin)
            try input.fileHandleForWriting.close()
        } else {
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        // Read both streams on their own threads so a full pipe never blocks the child.
        let stdoutData = Reader(out.fileHandleForReading)
        let stderrData = Reader(err.fileHandleForReading)
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw TimedOut(arguments: arguments, output: stdoutData.wait() + stderrData.wait())
        }
        process.waitUntilExit()
        return Result(code: process.terminationStatus, stdout: stdoutData.wait(), stderr: stderrData.wait())
    }

    struct TimedOut: Error {
        let arguments: [String]
        let output: String
    }

    /// Drains a pipe on a thread.
    final class Reader: @unchecked Sendable {
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread {
                self.data = handle.readDataToEndOfFile()
                self.done.signal()
            }.start()
        }

        func wait() -> String {
            done.wait()
            done.signal()
            return String(decoding: data, as: UTF8.self)
        }
    }
}

/// A dev server for one test and temporary profile directories, removed at the end.
final class CLITestBed {
    let server: DevServer
    let directory: URL

    init(savesPerHour: Int? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wv-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        server = try DevServer(
            binary: CLIProcess.binary("walletvault-server"), dataDirectory: directory.appendingPathComponent("server"),
            savesPerHour: savesPerHour)
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func home(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// Writes a file in the test directory (mode 0600) and returns its path.
    @discardableResult
    func file(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return url.path
    }

    /// `walletvault login --dev` for a profile.
    func login(_ home: String, sub: String = "alice", label: String) throws -> CLIProcess.Result {
        try CLIProcess.run(
            ["login", "--server", server.baseURL.absoluteString, "--dev", "--sub", sub, "--azp", "oem-a", "--label", label],
            home: self.home(home))
    }

    func run(_ home: String, _ arguments: [String], stdin: Data? = nil) throws -> CLIProcess.Result {
        try CLIProcess.run(arguments, home: self.home(home), stdin: stdin)
    }
}
