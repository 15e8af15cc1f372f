import Foundation
import Synchronization
import VaultCore
import VaultCrypto

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The built `walletvault-server` binary, started on a free loopback port with a test config.
public final class LiveServer: WalletVaultAPI, @unchecked Sendable {
    /// How it is configured.
    public typealias Options = TestServerOptions
    /// What nodes of one service share.
    public typealias Secrets = TestServerSecrets

    /// The server process.
    public let process = Process()
    /// The server's directory: its config, keys and database.
    public let directory: URL
    /// Where it listens, read from its first line on stdout.
    public let baseURL: URL
    /// The server's stderr; read through `log()`.
    public let stderrPipe = Pipe()
    /// The server's stderr, read as it arrives: a full pipe would block the server mid-request.
    private let stderrLog = Mutex(Data())

    /// Writes the configuration for `options` and starts the built binary on a free loopback port.
    ///
    /// - Throws: `ServerFailedToStart` with what the server printed instead of its listening line.
    public init(_ options: Options = Options()) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configURL = try options.writeConfiguration(in: directory)

        process.executableURL = Self.binary("walletvault-server")
        process.arguments = ["--config", configURL.path]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = stderrPipe
        try process.run()
        let line = Self.readLine(stdout.fileHandleForReading)
        guard let range = line.range(of: "http://") ?? line.range(of: "https://") else {
            process.terminate()
            throw ServerFailedToStart(output: line)
        }
        baseURL = URL(string: String(line[range.lowerBound...]).trimmingCharacters(in: .whitespacesAndNewlines))!
        stderrPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            // At end of file the handler would fire again and again with nothing to read.
            if chunk.isEmpty { handle.readabilityHandler = nil }
            self?.stderrLog.withLock { $0.append(chunk) }
        }
    }

    /// The bound port.
    public var port: UInt16 { UInt16(baseURL.port ?? 0) }

    deinit {
        stderrPipe.fileHandleForReading.readabilityHandler = nil
        if process.isRunning {
            process.terminate()
            // A server that ignores SIGTERM must fail its test, not hang the whole run: SIGKILL after its grace period
            // (10 s) and some.
            let deadline = Date().addingTimeInterval(15)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server printed something other than its listening line.
    public struct ServerFailedToStart: Error { let output: String }
    /// A request failed at the socket; says whether the server is still running and what it logged last.
    public struct ServerUnreachable: Error {
        let underlying: String
        let serverState: String
        let logTail: String
    }

    /// A binary built beside the test bundle, or named by an environment variable.
    public static func binary(_ name: String) -> URL {
        let variable = name.uppercased().replacingOccurrences(of: "-", with: "_") + "_BIN"
        if let path = ProcessInfo.processInfo.environment[variable] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    private static func readLine(_ handle: FileHandle) -> String {
        var bytes = Data()
        while let byte = try? handle.read(upToCount: 1), !byte.isEmpty, byte != Data([0x0A]) {
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - HTTP

    /// One connection pool per server: a pooled keep-alive connection to a stopped server's port
    /// must never carry a request meant for a new server that got the same port number.
    public let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.timeoutIntervalForRequest = 30
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }()

    public func perform(_ method: String, _ pathAndQuery: String, headers: [String: String], body: Data?) async throws -> APIReply {
        var request = URLRequest(method, pathAndQuery, relativeTo: baseURL, headers: headers)
        request.httpBody = body
        return try await perform(request)
    }

    /// Sends a request whose body is streamed, so it goes out chunked.
    public func send(_ method: String, _ pathAndQuery: String, headers: [String: String] = [:], bodyStream: InputStream) async throws
        -> APIReply
    {
        var request = URLRequest(method, pathAndQuery, relativeTo: baseURL, headers: headers)
        request.httpBodyStream = bodyStream
        return try await perform(request)
    }

    private func perform(_ request: URLRequest) async throws -> APIReply {
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            // Say whether the server is still there, and what it last wrote, instead of a bare URLError.
            let state =
                process.isRunning
                ? "running"
                : "exited with \(process.terminationStatus) (\(process.terminationReason == .uncaughtSignal ? "signal" : "exit"))"
            throw ServerUnreachable(underlying: "\(error)", serverState: state, logTail: String(log().suffix(2000)))
        }
        return APIReply(data, response as! HTTPURLResponse)
    }

    /// Everything the server wrote to stderr so far (its log).
    public func log() -> String {
        stderrLog.withLock { String(decoding: $0, as: UTF8.self) }
    }
}
