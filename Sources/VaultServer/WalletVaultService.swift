import Foundation
import VaultCore
import VaultHTTP
import VaultStorage
import VaultWire

/// The API: routes each request to its endpoint, turns errors into answers, and logs one line.
public struct WalletVaultService: HTTPResponder {
    /// The largest body any non-backup route reads (token exchange forms, dev token requests).
    static let smallBodyLimit = 16 * 1024

    private let store: any VaultStore
    private let sessionTokens: SessionTokenEndpoint
    private let backup: BackupEndpoint
    private let mountedIssuer: (any MountedIssuer)?
    private let maxBlobBytes: Int
    private let logger: RequestLogger
    private let metrics: ServerMetrics
    private let clientAddresses: ClientAddressResolver
    private let clock: any ServerClock
    private let drain: DrainSignal
    private let longPolls: LongPollHub
    private let maxWaitSeconds: Int
    /// Where woken long-polls re-read their blob: off the feed's thread, which must go back to listening.
    private let rechecks = DispatchQueue(label: "walletvault-long-poll-rechecks", attributes: .concurrent)
    /// The routes as metrics and logs name them; any other path is attacker-chosen text and shows as `(unknown)`.
    private let knownRoutes: Set<String>

    /// Assembles the service from its parts.
    public init(
        store: any VaultStore, oidc: OIDCTokenVerifier, sessions: SessionTokenService, storageKeys: StorageKeyDeriver,
        limits: ServerConfiguration.Limits, clock: any ServerClock, mountedIssuer: (any MountedIssuer)?, logger: RequestLogger,
        metrics: ServerMetrics, trustedProxies: [String] = [], drain: DrainSignal = DrainSignal(),
        changes: any BlobChangeFeed = InProcessChangeFeed()
    ) {
        self.store = store
        sessionTokens = SessionTokenEndpoint(oidc: oidc, sessions: sessions, clock: clock)
        backup = BackupEndpoint(
            store: store, sessions: sessions, storageKeys: storageKeys,
            rateLimit: SlidingWindowRateLimit(limit: limits.savesPerHour), clock: clock, changes: changes)
        let longPolls = LongPollHub(perUser: limits.longPollsPerUser, total: limits.maxLongPolls, metrics: metrics)
        changes.subscribe(onChange: longPolls.changed, onMissed: longPolls.changedEverywhere)
        self.longPolls = longPolls
        maxWaitSeconds = limits.maxWaitSeconds
        self.mountedIssuer = mountedIssuer
        knownRoutes = Self.apiRoutes.union(mountedIssuer?.knownPaths ?? [])
        self.maxBlobBytes = limits.maxBlobBytes
        self.logger = logger
        self.metrics = metrics
        self.clientAddresses = ClientAddressResolver(trustedProxies: trustedProxies)
        self.clock = clock
        self.drain = drain
    }

    public func bodyLimit(method: String, path: String) -> Int {
        path == WirePath.backup ? maxBlobBytes : Self.smallBodyLimit
    }

    public func tooLargeResponse(method: String, path: String, limit: Int) -> HTTPResponse {
        let error =
            path == WirePath.backup
            ? APIError.blobTooLarge(limit: limit)
            : APIError(.requestTooLarge, "the body is larger than \(limit) bytes")
        let response = error.response
        record(
            HTTPRequest(method: method, path: path), response: response, bytesIn: limit + 1, notes: RequestNotes(),
            started: DispatchTime.now())
        return response
    }

    public func malformedResponse(method: String, path: String, status: Int, reason: String) -> HTTPResponse {
        // A header section past its limit is answered below the API, in plain text as libmicrohttpd's own 431 was
        // (docs/openapi.yaml): the wire contract has no code for it. Logged like every refusal.
        let response =
            status == 431
            ? HTTPResponse(status: 431, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(reason.utf8))
            : APIError(status == 501 ? .notImplemented : .malformedRequest, reason).response
        // The path may be attacker text cut at a NUL: `record` names unknown ones `(unknown)`.
        let notes = RequestNotes()
        notes.reason = reason
        record(HTTPRequest(method: method, path: path), response: response, bytesIn: 0, notes: notes, started: DispatchTime.now())
        return response
    }

    /// Saves and erasures wait for a synced commit; everything else answers from memory or a read.
    public func waitsOnStorage(_ request: HTTPRequest) -> Bool {
        request.path == WirePath.backup && request.method == "POST"
    }

    /// A load with `wait` may be held until the user's blob changes.
    ///
    /// Only a GET load: anything else with a `wait` would be answered on the connection's thread, which a save or an
    /// erasure must never block on a disk sync (`waitsOnStorage` sends them to the storage workers).
    public func mayHold(_ request: HTTPRequest) -> Bool {
        request.path == WirePath.backup && request.method == "GET"
            && request.query[WireName.action] == BackupAction.load.rawValue && request.query[WireName.wait] != nil
    }

    public func hold(_ request: HTTPRequest) -> HTTPHoldDecision {
        let started = DispatchTime.now()
        let notes = RequestNotes()
        do {
            let decision = try backup.holdLoad(
                request, notes: notes, hub: longPolls, maxWaitSeconds: maxWaitSeconds, rechecks: rechecks,
                draining: drain.isRaised
            ) { [self] response, user in
                let held = RequestNotes()
                held.user = user
                record(request, response: response, bytesIn: 0, notes: held, started: started)
            }
            if case .answer(let response) = decision {
                record(request, response: response, bytesIn: request.body.count, notes: notes, started: started)
            }
            return decision
        } catch {
            let response = error.response
            record(request, response: response, bytesIn: request.body.count, notes: notes, started: started)
            return .answer(response)
        }
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let started = DispatchTime.now()
        let notes = RequestNotes()
        let response: HTTPResponse
        do {
            response = try route(request, notes: notes)
        } catch {
            response = error.response
        }
        record(request, response: response, bytesIn: request.body.count, notes: notes, started: started)
        return response
    }

    private func route(_ request: HTTPRequest, notes: RequestNotes) throws(APIError) -> HTTPResponse {
        switch request.path {
        case WirePath.sessionToken:
            guard request.method == "POST" else { throw APIError.methodNotAllowed(allow: ["POST"]) }
            return try sessionTokens.handle(request, notes: notes)
        case WirePath.backup:
            return try backup.handle(request, notes: notes)
        case WirePath.health:
            guard request.method == "GET" || request.method == "HEAD" else { throw APIError.methodNotAllowed(allow: ["GET", "HEAD"]) }
            return .json(200, ["status": "ok"])
        case WirePath.ready:
            guard request.method == "GET" || request.method == "HEAD" else { throw APIError.methodNotAllowed(allow: ["GET", "HEAD"]) }
            if drain.isRaised {
                notes.reason = "draining for shutdown"
                throw APIError(.unavailable, "the server is shutting down", headers: ["Retry-After": "1"])
            }
            do {
                try store.checkReachable()
            } catch {
                notes.reason = error.description
                notes.storeFailed = true
                throw APIError.unavailable
            }
            return .json(200, ["status": "ready"])
        case WirePath.metrics:
            guard request.method == "GET" || request.method == "HEAD" else { throw APIError.methodNotAllowed(allow: ["GET", "HEAD"]) }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")], body: Data(metrics.render().utf8))
        default:
            if let mountedIssuer, request.path.hasPrefix(mountedIssuer.pathPrefix) { return try mountedIssuer.handle(request) }
            throw APIError.unknownPath
        }
    }

    /// The API's own routes.
    private static let apiRoutes: Set<String> = [WirePath.sessionToken, WirePath.backup, WirePath.health, WirePath.ready, WirePath.metrics]

    private func record(_ request: HTTPRequest, response: HTTPResponse, bytesIn: Int, notes: RequestNotes, started: DispatchTime) {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000_000
        let route = knownRoutes.contains(request.path) ? request.path : "(unknown)"
        metrics.record(
            route: route, status: response.status, seconds: seconds, requestBytes: bytesIn,
            responseBytes: response.bodyLength, storeFailed: notes.storeFailed)
        guard logger.enabled else { return }
        logger.write(
            .init(
                time: clock.now().description, method: String(request.method.prefix(16)), route: route,
                status: response.status, durationMs: (seconds * 1_000_000).rounded() / 1000, bytesIn: bytesIn,
                bytesOut: response.bodyLength, client: clientAddresses.client(of: request), user: notes.user,
                reason: notes.reason))
    }
}
