import Foundation
import Synchronization
import VaultCore
import VaultCrypto
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built `walletvault-server` binary, started on a free loopback port with a test config.
public final class LiveServer: @unchecked Sendable {
    public let process = Process()
    public let directory: URL
    public let baseURL: URL
    public let stderrPipe = Pipe()
    /// The server's stderr, read as it arrives: a full pipe would block the server mid-request.
    private let stderrLog = Mutex(Data())

    public struct Options {
        public var maxBlobBytes: Int
        public var savesPerHour: Int
        /// Top-level config keys added or replaced (and `limits` members merged).
        public var extraConfig: [String: Any]
        /// The `database` config value; nil is a fresh SQLite file in the server's directory.
        public var database: String?
        /// The `history_versions` config value; nil leaves the server's default.
        public var historyVersions: Int?
        /// Session keys and pepper; give several servers the same ones to make them nodes of one service.
        public var secrets: Secrets

        /// Options as given; the defaults are 1 MiB blobs, 60 saves an hour, a fresh SQLite file, the default history.
        public init(maxBlobBytes: Int = 1_048_576, savesPerHour: Int = 60, extraConfig: [String: Any] = [:], database: String? = nil,
                    historyVersions: Int? = nil, secrets: Secrets = .random()) {
            self.maxBlobBytes = maxBlobBytes
            self.savesPerHour = savesPerHour
            self.extraConfig = extraConfig
            self.database = database
            self.historyVersions = historyVersions
            self.secrets = secrets
        }
    }

    /// What nodes of one service share besides the database: who can open a session and how keys are derived.
    public struct Secrets: Sendable {
        public let sessionKeys: Data
        public let pepper: Data

        public static func random() -> Secrets {
            Secrets(sessionKeys: Data(#"[{"kid":"s1","secret":"\#(Base64URL.encode(SecureRandom.bytes(count: 32)))"}]"#.utf8),
                    pepper: SecureRandom.bytes(count: 32))
        }
    }

    public init(_ options: Options = Options()) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try TestIssuer.shared.jwks.write(to: directory.appendingPathComponent("idp-jwks.json"))
        try TestIssuer.other.jwks.write(to: directory.appendingPathComponent("other-jwks.json"))
        try options.secrets.sessionKeys.write(to: directory.appendingPathComponent("session-keys.json"))
        try options.secrets.pepper.write(to: directory.appendingPathComponent("pepper"))
        var config: [String: Any] = [
            "listen": "127.0.0.1:0",
            "database": options.database ?? "sqlite:vault.sqlite",
            "issuers": [
                ["issuer": TestIssuer.shared.issuer, "jwks_file": "idp-jwks.json", "audiences": [TestIssuer.shared.audience],
                 "allowed_azp": ["oem-a", "oem-b"]],
                ["issuer": TestIssuer.other.issuer, "jwks_file": "other-jwks.json", "audiences": [TestIssuer.other.audience],
                 "allowed_azp": ["oem-a"]],
            ],
            "session_keys_file": "session-keys.json",
            "storage_key_pepper_file": "pepper",
            "limits": ["max_blob_bytes": options.maxBlobBytes, "saves_per_hour": options.savesPerHour],
        ]
        if let historyVersions = options.historyVersions { config["history_versions"] = historyVersions }
        for (key, value) in options.extraConfig {
            if key == "limits", let extra = value as? [String: Any], var limits = config["limits"] as? [String: Any] {
                limits.merge(extra) { _, new in new }
                config["limits"] = limits
            } else {
                config[key] = value
            }
        }
        let configURL = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: configURL)

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
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    public struct ServerFailedToStart: Error { let output: String }
    public struct ServerUnreachable: Error { let underlying: String; let serverState: String; let logTail: String }

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

    public struct Reply: Sendable {
        public let status: Int
        public let headers: [String: String]
        public let body: Data

        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        public func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

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

    public func send(_ method: String, _ pathAndQuery: String, headers: [String: String] = [:], body: Data? = nil,
              bodyStream: InputStream? = nil) async throws -> Reply {
        var request = URLRequest(url: URL(string: pathAndQuery, relativeTo: baseURL)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        if let bodyStream { request.httpBodyStream = bodyStream }
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            // Say whether the server is still there, and what it last wrote, instead of a bare URLError.
            let state = process.isRunning ? "running" : "exited with \(process.terminationStatus) (\(process.terminationReason == .uncaughtSignal ? "signal" : "exit"))"
            throw ServerUnreachable(underlying: "\(error)", serverState: state, logTail: String(log().suffix(2000)))
        }
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields["\(name)"] = "\(value)" }
        return Reply(status: http.statusCode, headers: fields, body: data)
    }

    /// D1 with a bearer access token; returns the session token.
    public func sessionToken(for accessToken: String) async throws -> String {
        let reply = try await send("POST", "/wallet-session-token.ashx", headers: ["Authorization": "Bearer \(accessToken)"])
        guard reply.status == 200, let token = reply.json["access_token"] as? String else {
            throw UnexpectedReply(status: reply.status, body: String(decoding: reply.body, as: UTF8.self))
        }
        return token
    }

    public func save(_ blob: Data, token: String, headers: [String: String] = [:]) async throws -> Reply {
        try await send("POST", "/wallet-backup.ashx?action=save",
                       headers: headers.merging(["Authorization": "Bearer \(token)", "Content-Type": "application/json"]) { a, _ in a },
                       body: blob)
    }

    public func load(token: String, headers: [String: String] = [:]) async throws -> Reply {
        try await send("GET", "/wallet-backup.ashx?action=load",
                       headers: headers.merging(["Authorization": "Bearer \(token)"]) { a, _ in a })
    }

    public struct UnexpectedReply: Error { let status: Int; let body: String }

    /// Everything the server wrote to stderr so far (its log).
    public func log() -> String {
        stderrLog.withLock { String(decoding: $0, as: UTF8.self) }
    }
}

/// A seed-shaped blob with recognisable content.
public func sampleBlob(_ marker: String = "v1", hint: String = "test device", cipherBytes: Int = 32) -> Data {
    var cipher = Data(marker.utf8)
    cipher.append(Data(repeating: 0x5A, count: max(0, cipherBytes - cipher.count)))
    let object: [String: Any] = [
        "v": 1,
        "wrappedDeks": [["kek_id": "device-\(marker)", "dek_cipher": Base64URL.encode(Data(repeating: 7, count: 40))]],
        "cipher": Base64URL.encode(cipher),
        "iv": Base64URL.encode(Data(repeating: 1, count: 12)),
        "tag": Base64URL.encode(Data(repeating: 2, count: 16)),
        "updatedUtc": "2026-08-12T19:00:00Z",
        "hint": hint,
    ]
    return try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
}
