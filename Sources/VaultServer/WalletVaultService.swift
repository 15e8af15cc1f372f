import Foundation
import VaultCore

/// The API: routes each request to its endpoint, turns errors into answers, and logs one line.
public struct WalletVaultService: HTTPResponder {
    static let sessionTokenPath = "/wallet-session-token.ashx"
    static let backupPath = "/wallet-backup.ashx"
    /// The largest body any non-backup route reads (token exchange forms, dev token requests).
    static let smallBodyLimit = 16 * 1024

    private let sessionTokens: SessionTokenEndpoint
    private let backup: BackupEndpoint
    private let devOIDC: DevOIDCProvider?
    private let maxBlobBytes: Int
    private let logger: RequestLogger
    private let clock: any ServerClock

    /// Assembles the service from its parts.
    public init(store: any VaultStore, oidc: OIDCTokenVerifier, sessions: SessionTokenService, storageKeys: StorageKeyDeriver,
                limits: ServerConfiguration.Limits, clock: any ServerClock, devOIDC: DevOIDCProvider?, logger: RequestLogger) {
        sessionTokens = SessionTokenEndpoint(oidc: oidc, sessions: sessions, clock: clock)
        backup = BackupEndpoint(store: store, sessions: sessions, storageKeys: storageKeys,
                                rateLimit: SlidingWindowRateLimit(limit: limits.savesPerHour), clock: clock)
        self.devOIDC = devOIDC
        self.maxBlobBytes = limits.maxBlobBytes
        self.logger = logger
        self.clock = clock
    }

    public func bodyLimit(method: String, path: String) -> Int {
        path == Self.backupPath ? maxBlobBytes : Self.smallBodyLimit
    }

    public func tooLargeResponse(method: String, path: String, limit: Int) -> HTTPResponse {
        let error = path == Self.backupPath
            ? APIError.blobTooLarge(limit: limit)
            : APIError(413, "request_too_large", "the body is larger than \(limit) bytes")
        log(method: method, path: path, response: error.response, bytesIn: limit + 1, notes: RequestNotes(), started: DispatchTime.now())
        return error.response
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
        log(method: request.method, path: request.path, response: response, bytesIn: request.body.count, notes: notes, started: started)
        return response
    }

    private func route(_ request: HTTPRequest, notes: RequestNotes) throws(APIError) -> HTTPResponse {
        switch request.path {
        case Self.sessionTokenPath:
            guard request.method == "POST" else { throw APIError.methodNotAllowed(allow: ["POST"]) }
            return try sessionTokens.handle(request, notes: notes)
        case Self.backupPath:
            return try backup.handle(request, notes: notes)
        case let path where path.hasPrefix("/dev-oidc/"):
            guard let devOIDC else { throw APIError.unknownPath }
            return try devOIDC.handle(request)
        default:
            throw APIError.unknownPath
        }
    }

    private func log(method: String, path: String, response: HTTPResponse, bytesIn: Int, notes: RequestNotes, started: DispatchTime) {
        guard logger.enabled else { return }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000
        // Unknown paths are logged as such: a path is attacker-chosen text.
        let route = [Self.sessionTokenPath, Self.backupPath].contains(path) || path.hasPrefix("/dev-oidc/") ? path : "(unknown)"
        logger.write(.init(time: clock.now().description, method: String(method.prefix(16)), route: String(route.prefix(64)),
                           status: response.status, durationMs: (elapsed * 1000).rounded() / 1000, bytesIn: bytesIn,
                           bytesOut: response.body.count, user: notes.user, reason: notes.reason))
    }
}
