import Foundation
import VaultCore
import VaultCrypto
import VaultHTTP
import VaultJOSE
import VaultStorage

/// Builds the application from a configuration, and serves it over HTTP.
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
        /// Where saves are announced to long-polls; stopped after the drain.
        let changes: any BlobChangeFeed

        /// Stops taking requests, lets those in flight finish within the grace period, and closes the store.
        ///
        /// Returns whether every request in flight finished in time.
        public func shutDown() -> Bool {
            // Readiness first: a load balancer polling on a connection it already has stops sending at once.
            drain.raise()
            // The drain answers every waiting long-poll at once (304), so it waits only for real work.
            let drained = server.drain(graceSeconds: shutdownGraceSeconds)
            changes.stop()
            heapTrimmer.stop()
            store.close()
            return drained
        }
    }

    /// The application a configuration describes, answering requests through `respond(to:)` with no socket:
    /// what `start` serves, and what in-process tests call.
    public struct Application: Sendable {
        /// The API.
        public let service: WalletVaultService
        /// The store, to close at shutdown.
        public let store: any VaultStore
        /// Counters `/metrics` reports; the transport reports connections to it.
        public let metrics: ServerMetrics
        /// Raised first at shutdown, so `/readyz` answers 503 while requests in flight finish.
        public let drain: DrainSignal
        /// Where saves are announced to the long-polls of every node.
        public let changes: any BlobChangeFeed
    }

    /// Builds the application from a checked configuration, optionally with an issuer served in process.
    ///
    /// - Throws: `ServerStartupError` for unreadable files, bad keys or an unusable database.
    public static func assemble(
        _ configuration: ServerConfiguration, mountedIssuer: (any MountedIssuer)? = nil,
        clock: any ServerClock = SystemClock(), logger: RequestLogger = RequestLogger(enabled: true)
    )
        throws(ServerStartupError) -> Application
    {
        let bodyCache = try openBodyCache(configuration)
        let store = try openStore(configuration, bodyCache: bodyCache)
        // SQLite has one node, this process; PostgreSQL may have many, which hear of each other's saves through it.
        let changes: any BlobChangeFeed =
            ServerConfiguration.postgresSchemes.contains(where: configuration.database.hasPrefix)
            ? PostgresChangeFeed(url: configuration.database) : InProcessChangeFeed()
        // Before the long-polls' subscription: a waiter woken by a change then finds the old file already gone.
        if let bodyCache {
            changes.subscribe(onChange: bodyCache.forget(tag:), onMissed: bodyCache.forgetAll, onLost: bodyCache.feedLost)
        }
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
            issuers.append(
                .init(
                    rules: JWTClaimsRules(
                        issuer: entry.issuer, audiences: Set(entry.audiences),
                        allowedAuthorizedParties: entry.allowedAZP.map(Set.init)),
                    keys: keys))
        }
        if let mountedIssuer {
            issuers.append(mountedIssuer.trustedIssuer)
            logger.message(mountedIssuer.startupWarning, level: "warning")
        }
        let metrics = ServerMetrics()
        let drain = DrainSignal()
        let service = WalletVaultService(
            store: store, oidc: OIDCTokenVerifier(issuers: issuers),
            sessions: try SessionTokenService(
                issuer: configuration.sessionIssuer,
                keys: try SessionTokenService.keys(fromFile: configuration.sessionKeysFile),
                oidcIssuers: Set(issuers.map(\.rules.issuer))),
            storageKeys: try storageKeys(configuration), limits: configuration.limits, clock: clock,
            mountedIssuer: mountedIssuer, logger: logger, metrics: metrics, trustedProxies: configuration.trustedProxies,
            drain: drain, changes: changes)
        return Application(service: service, store: store, metrics: metrics, drain: drain, changes: changes)
    }

    /// Starts a server from a checked configuration, optionally with an issuer served in process.
    ///
    /// - Throws: `ServerStartupError` for unreadable files, bad keys, an unusable database or a busy port.
    public static func start(
        _ configuration: ServerConfiguration, mountedIssuer: (any MountedIssuer)? = nil,
        clock: any ServerClock = SystemClock(), logRequests: Bool = true
    ) throws(ServerStartupError) -> Running {
        // Before the store is opened: a wrong certificate or key should stop startup having touched nothing.
        let tlsCredentials = try configuration.tls.map { files throws(ServerStartupError) in try TLSCredentials.load(files) }
        let application = try assemble(
            configuration, mountedIssuer: mountedIssuer, clock: clock,
            logger: RequestLogger(enabled: logRequests))
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
        let metrics = application.metrics
        let server = HTTPServer(
            options: options, responder: application.service,
            connectionObserver: { opened in metrics.connectionChanged(opened: opened) })
        let port: UInt16
        do {
            port = try server.start()
        } catch {
            application.changes.stop()
            application.store.close()
            throw ServerStartupError(error.reason)
        }
        return Running(
            server: server, shutdownGraceSeconds: configuration.shutdownGraceSeconds, host: address.host, port: port,
            tls: options.tls != nil, store: application.store, heapTrimmer: HeapTrimmer(intervalSeconds: 60),
            drain: application.drain, changes: application.changes)
    }

    /// Erases one user's vault and its history from the configured database, writer proof or not: the operator's path
    /// for a right-to-erasure request from a user who holds no key of the vault any more (FORMAT.md §11.8).
    ///
    /// With `sqlite:` the server must be stopped (it is the file's only writer and caches blobs); PostgreSQL nodes may
    /// run. The user is named by the token claims the storage key is made of: `iss`, `azp` and `sub`.
    /// - Throws: `ServerStartupError` when the pepper or the database cannot be used.
    public static func eraseUser(_ configuration: ServerConfiguration, issuer: String, authorizedParty: String, subject: String)
        throws(ServerStartupError)
    {
        let key = try storageKeys(configuration).key(issuer: issuer, authorizedParty: authorizedParty, subject: subject)
        // No body cache: the directory may be a running node's.
        let store = try openStore(configuration, bodyCache: nil)
        defer { store.close() }
        do {
            _ = try store.delete(key, proof: WriterProof { _, _ in true })
        } catch {
            throw ServerStartupError("erasing failed: \(error.reason)")
        }
        // Running nodes drop their cached copy (and wake the user's long-polls) on hearing of it.
        if ServerConfiguration.postgresSchemes.contains(where: configuration.database.hasPrefix) {
            let changes = PostgresChangeFeed(url: configuration.database)
            changes.publish(LongPollHub.changeTag(of: key))
            changes.stop()
        }
    }

    /// The storage keys under the configured pepper.
    ///
    /// - Throws: `ServerStartupError` when the pepper file cannot be read or is too short.
    private static func storageKeys(_ configuration: ServerConfiguration) throws(ServerStartupError) -> StorageKeyDeriver {
        guard let pepper = FileManager.default.contents(atPath: configuration.storageKeyPepperFile) else {
            throw ServerStartupError("config key storage_key_pepper_file: cannot read \(configuration.storageKeyPepperFile)")
        }
        return try StorageKeyDeriver(pepper: pepper)
    }

    /// The store the `database` key names: a `sqlite:` file or a `postgresql://` URL.
    /// The PostgreSQL node's body cache, when `body_cache_directory` names one.
    ///
    /// - Throws: `ServerStartupError` when the directory cannot be created, opened or emptied.
    private static func openBodyCache(_ configuration: ServerConfiguration) throws(ServerStartupError) -> PostgresBodyCache? {
        guard let directory = configuration.bodyCacheDirectory else { return nil }
        guard ServerConfiguration.postgresSchemes.contains(where: configuration.database.hasPrefix) else {
            throw ServerStartupError("config key body_cache_directory: only with a PostgreSQL database")
        }
        do {
            return try PostgresBodyCache(
                directory: directory, budgetBytes: configuration.bodyCacheBytes, changeTag: LongPollHub.changeTag(of:))
        } catch {
            throw ServerStartupError("config key body_cache_directory: \(error.reason)")
        }
    }

    private static func openStore(_ configuration: ServerConfiguration, bodyCache: PostgresBodyCache?)
        throws(ServerStartupError) -> any VaultStore
    {
        let database = configuration.database
        do {
            if database.hasPrefix("sqlite:") {
                // This process is SQLite's only writer, so a cache in front of it cannot go stale.
                return CachingVaultStore(
                    base: try SQLiteVaultStore(
                        path: String(database.dropFirst("sqlite:".count)),
                        historyVersions: configuration.historyVersions))
            }
            if ServerConfiguration.postgresSchemes.contains(where: database.hasPrefix) {
                return try PostgresVaultStore(
                    url: database, poolSize: configuration.databasePoolSize,
                    historyVersions: configuration.historyVersions, bodyCache: bodyCache)
            }
        } catch {
            // The reason never quotes the URL, which may carry a password.
            throw ServerStartupError("config key database: \(error.reason)")
        }
        throw ServerStartupError("config key database: expected sqlite:PATH or postgresql://...")
    }
}
