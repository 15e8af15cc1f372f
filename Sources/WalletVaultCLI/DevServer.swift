import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `walletvault-server --dev` child process on a free loopback port, for `demo` and the tests.
public final class DevServer: @unchecked Sendable {
    /// The base URL it listens on.
    public let baseURL: URL
    /// Its process id, so callers can check it is gone after `stop()`.
    public let processID: Int32
    // Only `stop()` touches the process after `init`, under `lock`.
    private let process: Process
    private let lock = NSLock()

    /// The server binary: `$WALLETVAULT_SERVER_BIN`, else `walletvault-server` next to this executable.
    public static func binary(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let path = environment["WALLETVAULT_SERVER_BIN"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let own = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        return own.resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("walletvault-server")
    }

    /// Starts the server with its data in `dataDirectory` and waits (up to `timeoutSeconds`) for its first line.
    ///
    /// - Throws: `CLIError` `.server` when the binary is missing or does not start.
    public init(binary: URL = DevServer.binary(), dataDirectory: URL, savesPerHour: Int? = nil, timeoutSeconds: Double = 20)
        throws(CLIError)
    {
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw CLIError(.server, "no server binary at \(binary.path): build it (`swift build`) or set WALLETVAULT_SERVER_BIN")
        }
        let process = Process()
        process.executableURL = binary
        process.arguments =
            ["--dev", "--listen", "127.0.0.1:0", "--data-dir", dataDirectory.path, "--quiet"]
            + (savesPerHour.map { ["--saves-per-hour", String($0)] } ?? [])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw CLIError(.server, "cannot start \(binary.path): check it is executable")
        }
        let line = Self.firstLine(of: output.fileHandleForReading, timeoutSeconds: timeoutSeconds)
        guard let line, let range = line.range(of: "http://"),
            let url = URL(string: String(line[range.lowerBound...]).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            Self.terminate(process)
            throw CLIError(
                .server,
                "the development server did not start within \(Int(timeoutSeconds)) s: run "
                    + "`\(binary.path) --dev --listen 127.0.0.1:0` to see why")
        }
        self.process = process
        processID = process.processIdentifier
        baseURL = url
    }

    deinit {
        stop()
    }

    /// Stops the server (SIGTERM, then SIGKILL after five seconds) and reaps it; safe to call twice.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        Self.terminate(process)
    }

    private static func terminate(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// The first line the server writes, read on another thread so a server that hangs cannot hang the caller.
    private static func firstLine(of handle: FileHandle, timeoutSeconds: Double) -> String? {
        final class Box: @unchecked Sendable { var line: String? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Thread {
            var bytes = Data()
            while let byte = try? handle.read(upToCount: 1), !byte.isEmpty, byte != Data([0x0A]) { bytes.append(byte) }
            box.line = String(decoding: bytes, as: UTF8.self)
            done.signal()
        }.start()
        guard done.wait(timeout: .now() + timeoutSeconds) == .success else { return nil }
        return box.line
    }
}
