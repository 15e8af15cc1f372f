import Foundation
import VaultHTTP

/// The server's configuration file, as documented in the README.
///
/// Relative paths are resolved against the directory of the configuration file.
public struct ServerConfiguration: Sendable, Decodable {
    /// One trusted OIDC issuer.
    public struct Issuer: Sendable, Decodable {
        /// The exact `iss` value.
        public var issuer: String
        /// A local JWKS file; exactly one of this and `jwksURI`.
        public var jwksFile: String?
        /// A JWKS URL, fetched and cached; exactly one of this and `jwksFile`.
        public var jwksURI: String?
        /// `aud` must contain one of these.
        public var audiences: [String]
        /// OEM clients (`azp`) allowed to use the service; nil allows any (development only).
        public var allowedAZP: [String]?

        enum CodingKeys: String, CodingKey {
            case issuer, audiences
            case jwksFile = "jwks_file"
            case jwksURI = "jwks_uri"
            case allowedAZP = "allowed_azp"
        }

        /// Creates an issuer entry.
        public init(issuer: String, jwksFile: String? = nil, jwksURI: String? = nil, audiences: [String], allowedAZP: [String]?) {
            self.issuer = issuer
            self.jwksFile = jwksFile
            self.jwksURI = jwksURI
            self.audiences = audiences
            self.allowedAZP = allowedAZP
        }
    }

    /// Size and rate limits.
    public struct Limits: Sendable, Decodable {
        /// The largest blob accepted, in bytes.
        public var maxBlobBytes = 1_048_576
        /// Accepted saves per user in a sliding hour.
        public var savesPerHour = 60
        /// Most open connections in all.
        public var maxConnections = 1024
        /// Most open connections from one IP address, so one client cannot starve the others.
        public var maxConnectionsPerIP = 64
        /// Seconds a connection may sit idle before it is closed.
        public var connectionTimeoutSeconds = 30
        /// Seconds a request's header section may take from the connection opening (or the previous answer);
        /// a client still sending headers then is cut off. A phone on a poor network sends ~2 KB of headers in
        /// a few round trips, far inside the default.
        public var headerTimeoutSeconds: Double = 20
        /// The slowest average, in bytes per second since the headers, a body may arrive at once
        /// `bodyGraceSeconds` have passed; a slower one is cut off. 0 turns the check off. The default, 1 KiB/s,
        /// is below what GPRS uploads; a 1 MiB blob at that rate takes 17 minutes.
        public var bodyMinimumBytesPerSecond = 1024
        /// Seconds a body may take before its average rate is checked.
        public var bodyGraceSeconds: Double = 10
        /// Long-polls (`action=load` with `wait`) one user may have waiting at once; past it a long-poll is answered
        /// 429. A user's devices hold one each, so a handful covers a phone, a tablet and a laptop.
        public var longPollsPerUser = 4
        /// Long-polls waiting at once on this node; past it a long-poll is answered 429. Each holds a connection, so
        /// this stays below `maxConnections` and leaves room for other requests.
        public var maxLongPolls = 768
        /// The longest `wait` a load may ask for, in seconds; a longer one is answered 400 `invalid_wait`.
        public var maxWaitSeconds = 60

        enum CodingKeys: String, CodingKey {
            case maxBlobBytes = "max_blob_bytes"
            case savesPerHour = "saves_per_hour"
            case maxConnections = "max_connections"
            case maxConnectionsPerIP = "max_connections_per_ip"
            case connectionTimeoutSeconds = "connection_timeout_seconds"
            case headerTimeoutSeconds = "header_timeout_seconds"
            case bodyMinimumBytesPerSecond = "body_min_bytes_per_second"
            case bodyGraceSeconds = "body_grace_seconds"
            case longPollsPerUser = "long_polls_per_user"
            case maxLongPolls = "max_long_polls"
            case maxWaitSeconds = "max_wait_seconds"
        }

        /// Creates the default limits.
        public init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            maxBlobBytes = try container.decodeIfPresent(Int.self, forKey: .maxBlobBytes) ?? maxBlobBytes
            savesPerHour = try container.decodeIfPresent(Int.self, forKey: .savesPerHour) ?? savesPerHour
            maxConnections = try container.decodeIfPresent(Int.self, forKey: .maxConnections) ?? maxConnections
            maxConnectionsPerIP = try container.decodeIfPresent(Int.self, forKey: .maxConnectionsPerIP) ?? maxConnectionsPerIP
            connectionTimeoutSeconds =
                try container.decodeIfPresent(Int.self, forKey: .connectionTimeoutSeconds)
                ?? connectionTimeoutSeconds
            headerTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .headerTimeoutSeconds) ?? headerTimeoutSeconds
            bodyMinimumBytesPerSecond =
                try container.decodeIfPresent(Int.self, forKey: .bodyMinimumBytesPerSecond)
                ?? bodyMinimumBytesPerSecond
            bodyGraceSeconds = try container.decodeIfPresent(Double.self, forKey: .bodyGraceSeconds) ?? bodyGraceSeconds
            longPollsPerUser = try container.decodeIfPresent(Int.self, forKey: .longPollsPerUser) ?? longPollsPerUser
            maxLongPolls = try container.decodeIfPresent(Int.self, forKey: .maxLongPolls) ?? maxLongPolls
            maxWaitSeconds = try container.decodeIfPresent(Int.self, forKey: .maxWaitSeconds) ?? maxWaitSeconds
        }
    }

    /// `host:port` to listen on (IPv4 literal).
    public var listen: String
    /// `sqlite:PATH`, or a `postgresql://` (also `postgres://`) URL for a database shared by several nodes.
    public var database: String
    /// Connections kept to a PostgreSQL database (`database_pool_size`).
    public var databasePoolSize: Int
    /// Versions kept per user, the current one included (`history_versions`).
    public var historyVersions: Int
    /// A PostgreSQL node's local directory for its read-through cache of bodies as files (`body_cache_directory`);
    /// nil for none. Emptied at every start; give each node its own.
    public var bodyCacheDirectory: String?
    /// The most bytes of bodies the node's body cache keeps (`body_cache_bytes`).
    public var bodyCacheBytes: Int
    /// Trusted OIDC issuers.
    public var issuers: [Issuer]
    /// JSON file `[{"kid", "secret"}]` of session-token keys; the first signs, all verify.
    public var sessionKeysFile: String
    /// File of at least 32 random bytes keying the storage-key HMAC.
    public var storageKeyPepperFile: String
    /// Size and rate limits.
    public var limits: Limits
    /// The `iss` of minted session tokens.
    public var sessionIssuer: String
    /// HTTP worker threads; by default one per core, at least two (`HTTPServer.Options.defaultThreads`).
    public var threads: Int
    /// Seconds SIGTERM waits for requests in flight before closing.
    public var shutdownGraceSeconds: Double = 10
    /// Peers whose `X-Forwarded-For` names the client (a TLS-terminating proxy in front).
    public var trustedProxies: [String] = []
    /// Certificate chain and key files for HTTPS; absent serves plain HTTP.
    public var tls: TLSFiles?

    /// PEM files and protocol profile for HTTPS.
    public struct TLSFiles: Sendable, Decodable {
        /// The certificate chain, leaf first.
        public var certificateFile: String
        /// The private key, unencrypted.
        public var keyFile: String
        /// Which Mozilla TLS configuration to follow (`profile`), default intermediate.
        public var profile: TLSProfile

        enum CodingKeys: String, CodingKey {
            case certificateFile = "certificate_file"
            case keyFile = "key_file"
            case profile
        }

        /// Creates the TLS entry.
        public init(certificateFile: String, keyFile: String, profile: TLSProfile = .intermediate) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.profile = profile
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            certificateFile = try container.decode(String.self, forKey: .certificateFile)
            keyFile = try container.decode(String.self, forKey: .keyFile)
            let name = try container.decodeIfPresent(String.self, forKey: .profile) ?? TLSProfile.intermediate.rawValue
            guard let profile = TLSProfile(rawValue: name) else {
                // A DecodingError would only say "invalid"; name the choices instead.
                let choices = TLSProfile.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
                throw ServerStartupError("key tls.profile: expected \(choices)")
            }
            self.profile = profile
        }
    }

    enum CodingKeys: String, CodingKey {
        case listen, database, issuers, limits, threads, tls
        case sessionKeysFile = "session_keys_file"
        case storageKeyPepperFile = "storage_key_pepper_file"
        case sessionIssuer = "session_issuer"
        case shutdownGraceSeconds = "shutdown_grace_seconds"
        case trustedProxies = "trusted_proxies"
        case databasePoolSize = "database_pool_size"
        case historyVersions = "history_versions"
        case bodyCacheDirectory = "body_cache_directory"
        case bodyCacheBytes = "body_cache_bytes"
    }

    /// `body_cache_bytes` when the key is absent: 1 GiB.
    public static let defaultBodyCacheBytes = 1 << 30

    /// URL schemes that select the PostgreSQL store.
    public static let postgresSchemes = ["postgresql://", "postgres://"]

    /// Creates a configuration in code (tests, dev mode).
    public init(
        listen: String, database: String, issuers: [Issuer], sessionKeysFile: String, storageKeyPepperFile: String,
        limits: Limits = Limits(), sessionIssuer: String = "walletvault", threads: Int = HTTPServer.Options.defaultThreads,
        databasePoolSize: Int = 8, historyVersions: Int = 10, bodyCacheDirectory: String? = nil,
        bodyCacheBytes: Int = ServerConfiguration.defaultBodyCacheBytes
    ) {
        self.bodyCacheDirectory = bodyCacheDirectory
        self.bodyCacheBytes = bodyCacheBytes
        self.listen = listen
        self.database = database
        self.databasePoolSize = databasePoolSize
        self.historyVersions = historyVersions
        self.issuers = issuers
        self.sessionKeysFile = sessionKeysFile
        self.storageKeyPepperFile = storageKeyPepperFile
        self.limits = limits
        self.sessionIssuer = sessionIssuer
        self.threads = threads
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        listen = try container.decode(String.self, forKey: .listen)
        database = try container.decode(String.self, forKey: .database)
        databasePoolSize = try container.decodeIfPresent(Int.self, forKey: .databasePoolSize) ?? 8
        historyVersions = try container.decodeIfPresent(Int.self, forKey: .historyVersions) ?? 10
        bodyCacheDirectory = try container.decodeIfPresent(String.self, forKey: .bodyCacheDirectory)
        bodyCacheBytes = try container.decodeIfPresent(Int.self, forKey: .bodyCacheBytes) ?? Self.defaultBodyCacheBytes
        issuers = try container.decode([Issuer].self, forKey: .issuers)
        sessionKeysFile = try container.decode(String.self, forKey: .sessionKeysFile)
        storageKeyPepperFile = try container.decode(String.self, forKey: .storageKeyPepperFile)
        limits = try container.decodeIfPresent(Limits.self, forKey: .limits) ?? Limits()
        sessionIssuer = try container.decodeIfPresent(String.self, forKey: .sessionIssuer) ?? "walletvault"
        threads = try container.decodeIfPresent(Int.self, forKey: .threads) ?? HTTPServer.Options.defaultThreads
        shutdownGraceSeconds = try container.decodeIfPresent(Double.self, forKey: .shutdownGraceSeconds) ?? 10
        trustedProxies = try container.decodeIfPresent([String].self, forKey: .trustedProxies) ?? []
        tls = try container.decodeIfPresent(TLSFiles.self, forKey: .tls)
    }

    /// Reads and checks a configuration file, resolving relative paths against its directory.
    ///
    /// - Throws: `ServerStartupError` naming the missing or bad key.
    public static func load(path: String) throws(ServerStartupError) -> ServerConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServerStartupError("cannot read config file \(path)")
        }
        var configuration: ServerConfiguration
        do {
            configuration = try JSONDecoder().decode(ServerConfiguration.self, from: data)
        } catch let error as DecodingError {
            throw ServerStartupError("config \(path): \(Self.explain(error))")
        } catch let error as ServerStartupError {
            throw ServerStartupError("config \(path): \(error.reason)")
        } catch {
            throw ServerStartupError("config \(path): not valid JSON")
        }
        let base = URL(fileURLWithPath: path).deletingLastPathComponent()
        func resolve(_ file: String) -> String {
            file.hasPrefix("/") ? file : base.appendingPathComponent(file).path
        }
        configuration.sessionKeysFile = resolve(configuration.sessionKeysFile)
        configuration.storageKeyPepperFile = resolve(configuration.storageKeyPepperFile)
        configuration.bodyCacheDirectory = configuration.bodyCacheDirectory.map(resolve)
        if configuration.database.hasPrefix("sqlite:") {
            configuration.database = "sqlite:" + resolve(String(configuration.database.dropFirst("sqlite:".count)))
        }
        for index in configuration.issuers.indices {
            configuration.issuers[index].jwksFile = configuration.issuers[index].jwksFile.map(resolve)
        }
        if var tls = configuration.tls {
            tls.certificateFile = resolve(tls.certificateFile)
            tls.keyFile = resolve(tls.keyFile)
            configuration.tls = tls
        }
        try configuration.check()
        return configuration
    }

    /// Checks values that decoding alone cannot.
    ///
    /// - Throws: `ServerStartupError` naming the key.
    public func check() throws(ServerStartupError) {
        _ = try listenAddress()
        let isSQLite = database.hasPrefix("sqlite:") && database.count > "sqlite:".count
        let isPostgres = Self.postgresSchemes.contains { database.hasPrefix($0) }
        guard isSQLite || isPostgres else {
            throw ServerStartupError("config key database: expected sqlite:PATH or postgresql://...")
        }
        guard (1...1024).contains(databasePoolSize) else { throw ServerStartupError("config key database_pool_size: 1 to 1024") }
        guard (1...1000).contains(historyVersions) else { throw ServerStartupError("config key history_versions: 1 to 1000") }
        if let bodyCacheDirectory {
            // SQLite's bodies are files already; a cache of them would be a second copy.
            guard isPostgres else { throw ServerStartupError("config key body_cache_directory: only with a PostgreSQL database") }
            guard !bodyCacheDirectory.isEmpty else { throw ServerStartupError("config key body_cache_directory: a path") }
        }
        guard ((1 << 20)...(1 << 40)).contains(bodyCacheBytes) else {
            throw ServerStartupError("config key body_cache_bytes: 1 MiB (1048576) to 1 TiB")
        }
        guard !issuers.isEmpty else { throw ServerStartupError("config key issuers: at least one issuer is required") }
        for (index, issuer) in issuers.enumerated() {
            guard (issuer.jwksFile == nil) != (issuer.jwksURI == nil) else {
                throw ServerStartupError("config key issuers[\(index)]: exactly one of jwks_file and jwks_uri")
            }
            guard !issuer.audiences.isEmpty else {
                throw ServerStartupError("config key issuers[\(index)].audiences: at least one audience")
            }
        }
        guard limits.maxBlobBytes > 0 else { throw ServerStartupError("config key limits.max_blob_bytes: must be positive") }
        guard limits.savesPerHour > 0 else { throw ServerStartupError("config key limits.saves_per_hour: must be positive") }
        guard (1...256).contains(threads) else { throw ServerStartupError("config key threads: 1 to 256") }
        guard limits.maxConnections > 0 else { throw ServerStartupError("config key limits.max_connections: must be positive") }
        guard limits.maxConnectionsPerIP >= 0 else {
            throw ServerStartupError("config key limits.max_connections_per_ip: 0 (no cap) or more")
        }
        guard limits.connectionTimeoutSeconds > 0 else {
            throw ServerStartupError("config key limits.connection_timeout_seconds: must be positive")
        }
        guard limits.headerTimeoutSeconds > 0 else {
            throw ServerStartupError("config key limits.header_timeout_seconds: must be positive")
        }
        guard limits.bodyMinimumBytesPerSecond >= 0 else {
            throw ServerStartupError("config key limits.body_min_bytes_per_second: 0 (no minimum) or more")
        }
        guard limits.bodyGraceSeconds >= 0 else { throw ServerStartupError("config key limits.body_grace_seconds: 0 or more") }
        guard limits.longPollsPerUser >= 0 else { throw ServerStartupError("config key limits.long_polls_per_user: 0 (none) or more") }
        guard limits.maxLongPolls >= 0 else { throw ServerStartupError("config key limits.max_long_polls: 0 (none) or more") }
        guard (1...300).contains(limits.maxWaitSeconds) else { throw ServerStartupError("config key limits.max_wait_seconds: 1 to 300") }
        guard shutdownGraceSeconds >= 0 else { throw ServerStartupError("config key shutdown_grace_seconds: 0 or more") }
    }

    /// The host and port of `listen`.
    ///
    /// - Throws: `ServerStartupError` when it is not `IPv4:port`.
    public func listenAddress() throws(ServerStartupError) -> (host: String, port: UInt16) {
        let parts = listen.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]), parts[0].split(separator: ".").count == 4 else {
            throw ServerStartupError("config key listen: expected IPv4:port such as 127.0.0.1:8080")
        }
        return (String(parts[0]), port)
    }

    private static func explain(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: ["."])
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context.codingPath)
            return "missing key \(parent.isEmpty ? key.stringValue : parent + "." + key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "key \(path(context.codingPath)) has the wrong type"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "key \(path(context.codingPath)) is invalid"
        @unknown default:
            return "invalid"
        }
    }
}
