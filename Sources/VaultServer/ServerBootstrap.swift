import Foundation
import VaultCore
import VaultCrypto

/// Builds a running server from a configuration file or from `--dev` defaults.
public enum ServerBootstrap {
    /// A started server and what it listens on.
    public struct Running: Sendable {
        /// The HTTP server.
        public let server: HTTPServer
        /// Seconds a shutdown waits for requests in flight.
        public let shutdownGraceSeconds: Double
        /// The host it bound.
        public let host: String
        /// The port it bound.
        public let port: UInt16
        /// Whether it serves HTTPS.
        public let tls: Bool
        /// The store, to close at shutdown.
        public let store: any VaultStore
        /// Returns the allocator's free pages to the system once a minute.
        let heapTrimmer: HeapTrimmer
        /// Raised first at shutdown, so `/readyz` answers 503 while requests in flight finish.
        let drain: DrainSignal

        /// Stops taking requests, lets those in flight finish within the grace period, and closes the store.
        ///
        /// Returns whether every request in flight finished in time.
        public func shutDown() -> Bool {
            // Readiness first: a load balancer polling on a connection it already has stops sending at once.
            drain.raise()
            let drained = server.drain(graceSeconds: shutdownGraceSeconds)
            heapTrimmer.stop()
            store.close()
            return drained
        }
    }

    /// Starts a server from a checked configuration, optionally with the development issuer.
    ///
    /// - Throws: `ServerStartupError` for unreadable files, bad keys, an unusable database or a busy port.
    public static func start(_ configuration: ServerConfiguration, devOIDC: DevOIDCProvider? = nil,
                             clock: any ServerClock = SystemClock(), logRequests: Bool = true) throws(ServerStartupError) -> Running {
        let logger = RequestLogger(enabled: logRequests)
        // Before the store is opened: a wrong certificate or key should stop startup having touched nothing.
        let tlsCredentials = try configuration.tls.map { files throws(ServerStartupError) in try TLSCredentials.load(files) }
        let store = try openStore(configuration)
        var issuers: [OIDCTokenVerifier.TrustedIssuer] = []
        for entry in configuration.issuers {
            let keys: JWKSSource
            if let file = entry.jwksFile {
                keys = try JWKSSource.file(file)
            } else if let uri = entry.jwksURI, let url = URL(string: uri), ["https", "http"].contains(url.scheme) {
                keys = JWKSSource(url: url)
            } else {
                throw ServerStartupError("config key issuers: jwks_uri of \(entry.issuer) is not an http(s) URL")
            }
            issuers.append(.init(
                rules: JWTClaimsRules(issuer: entry.issuer, audiences: Set(entry.audiences),
                                      allowedAuthorizedParties: entry.allowedAZP.map(Set.init)),
                keys: keys))
        }
        if let devOIDC {
            issuers.append(devOIDC.trustedIssuer)
            logger.message("DEVELOPMENT MODE: the built-in /dev-oidc/ issuer signs a token for anyone. Never expose this server.",
                           level: "warning")
        }
        guard let pepper = FileManager.default.contents(atPath: configuration.storageKeyPepperFile) else {
            throw ServerStartupError("config key storage_key_pepper_file: cannot read \(configuration.storageKeyPepperFile)")
        }
        let metrics = ServerMetrics()
        let drain = DrainSignal()
        let service = WalletVaultService(
            store: store, oidc: OIDCTokenVerifier(issuers: issuers),
            sessions: try SessionTokenService(issuer: configuration.sessionIssuer,
                                              keys: try SessionTokenService.keys(fromFile: configuration.sessionKeysFile),
                                              oidcIssuers: Set(issuers.map(\.rules.issuer))),
            storageKeys: try StorageKeyDeriver(pepper: pepper), limits: configuration.limits, clock: clock,
            devOIDC: devOIDC, logger: logger, metrics: metrics, trustedProxies: configuration.trustedProxies, drain: drain)
        let address = try configuration.listenAddress()
        var options = HTTPServer.Options()
        options.host = address.host
        options.port = address.port
        options.threads = configuration.threads
        options.connectionLimit = configuration.limits.maxConnections
        options.perIPConnectionLimit = configuration.limits.maxConnectionsPerIP
        options.connectionTimeoutSeconds = configuration.limits.connectionTimeoutSeconds
        options.headerTimeoutSeconds = configuration.limits.headerTimeoutSeconds
        options.bodyMinimumBytesPerSecond = configuration.limits.bodyMinimumBytesPerSecond
        options.bodyGraceSeconds = configuration.limits.bodyGraceSeconds
        if let tls = configuration.tls, let tlsCredentials {
            options.tls = (tlsCredentials.certificateChain, tlsCredentials.privateKey)
            options.tlsProfile = tls.profile
        }
        let server = HTTPServer(options: options, responder: service, metrics: metrics)
        let port = try server.start()
        return Running(server: server, shutdownGraceSeconds: configuration.shutdownGraceSeconds, host: address.host, port: port,
                       tls: options.tls != nil, store: store, heapTrimmer: HeapTrimmer(intervalSeconds: 60), drain: drain)
    }

    /// The store the `database` key names: a `sqlite:` file or a `postgresql://` URL.
    private static func openStore(_ configuration: ServerConfiguration) throws(ServerStartupError) -> any VaultStore {
        let database = configuration.database
        do {
            if database.hasPrefix("sqlite:") {
                // This process is SQLite's only writer, so a cache in front of it cannot go stale.
                return CachingVaultStore(base: try SQLiteVaultStore(path: String(database.dropFirst("sqlite:".count)),
                                                                    historyVersions: configuration.historyVersions))
            }
            if ServerConfiguration.postgresSchemes.contains(where: database.hasPrefix) {
                return try PostgresVaultStore(url: database, poolSize: configuration.databasePoolSize,
                                              historyVersions: configuration.historyVersions)
            }
        } catch {
            // The reason never quotes the URL, which may carry a password.
            throw ServerStartupError("config key database: \(error.reason)")
        }
        throw ServerStartupError("config key database: expected sqlite:PATH or postgresql://...")
    }

    /// The `--dev` configuration: loopback, SQLite and secrets under `dataDirectory`, generated once (mode 0600).
    ///
    /// - Throws: `ServerStartupError` when the directory or a secret cannot be written or read.
    public static func development(dataDirectory: String, listen: String, clock: any ServerClock = SystemClock())
        throws(ServerStartupError) -> (ServerConfiguration, DevOIDCProvider)
    {
        let files = FileManager.default
        do {
            try files.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ServerStartupError("cannot create data directory \(dataDirectory)")
        }
        func secret(_ name: String, make: () throws -> Data) throws(ServerStartupError) -> String {
            let path = URL(fileURLWithPath: dataDirectory).appendingPathComponent(name).path
            if !files.fileExists(atPath: path) {
                guard let contents = try? make(), files.createFile(atPath: path, contents: contents, attributes: [.posixPermissions: 0o600])
                else { throw ServerStartupError("cannot write \(path)") }
            }
            return path
        }
        let sessionKeys = try secret("session-keys.json") {
            Data("[{\"kid\":\"dev-1\",\"secret\":\"\(Base64URL.encode(SecureRandom.bytes(count: 32)))\"}]".utf8)
        }
        let pepper = try secret("storage-key-pepper") { SecureRandom.bytes(count: 32) }
        let devKeyPath = try secret("dev-oidc-rs256.pem") { Data(try RSA.Signing.PrivateKey(keySize: 2048).pemRepresentation.utf8) }
        guard let pem = try? String(contentsOfFile: devKeyPath, encoding: .utf8),
            let devKey = try? RSA.Signing.PrivateKey(pemRepresentation: pem)
        else { throw ServerStartupError("cannot read the development signing key \(devKeyPath)") }
        let database = "sqlite:" + URL(fileURLWithPath: dataDirectory).appendingPathComponent("vault.sqlite").path
        let configuration = ServerConfiguration(listen: listen, database: database, issuers: [], sessionKeysFile: sessionKeys,
                                                storageKeyPepperFile: pepper, sessionIssuer: "walletvault-dev")
        guard (try? configuration.listenAddress())?.host.hasPrefix("127.") == true else {
            throw ServerStartupError("--dev listens on loopback only (127.0.0.0/8)")
        }
        return (configuration, DevOIDCProvider(signingKey: devKey, clock: clock))
    }
}
