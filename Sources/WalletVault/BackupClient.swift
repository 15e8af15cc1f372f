import Foundation
import VaultCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The backup service's save and load (D2, D3) with typed errors, session renewal and retries.
///
/// A 401 renews the session token once and retries once; a second 401 is `unauthorized`.
/// Network errors and 5xx are retried with jittered exponential backoff; other 4xx are not.
public struct BackupClient: Sendable {
    /// What a save must find on the server.
    public enum Precondition: Sendable, Equatable {
        /// Replace whatever is stored.
        case none
        /// Replace only this version (`If-Match`).
        case ifMatch(syncID: String)
        /// Store only if nothing is stored (`If-None-Match: *`).
        case ifNoneStored
    }

    /// A stored blob and its version.
    public struct Snapshot: Sendable, Equatable {
        /// The exact bytes.
        public let blob: Data
        /// The version (`sync_id`).
        public let syncID: String

        /// Creates a snapshot.
        public init(blob: Data, syncID: String) {
            self.blob = blob
            self.syncID = syncID
        }
    }

    /// The outcome of a load.
    public enum LoadResult: Sendable, Equatable {
        /// The current blob.
        case blob(Snapshot)
        /// The version named in `ifNoneMatch` is still current.
        case notModified
    }

    private let endpoint: URL
    private let tokens: SessionTokenProvider
    private let sender: RetryingSender

    /// Creates a client for the server at `serverURL`.
    public init(serverURL: URL, tokens: SessionTokenProvider, transport: any HTTPTransport = URLSessionTransport(),
                clock: any WalletClock = SystemWalletClock(), retryPolicy: RetryPolicy = RetryPolicy()) {
        endpoint = serverURL.appendingPathComponent("wallet-backup.ashx")
        self.tokens = tokens
        sender = RetryingSender(transport: transport, policy: retryPolicy, clock: clock)
    }

    /// Saves a blob and returns its new version.
    ///
    /// - Throws: `BackupError` for every refusal: shape, size, rate limit, conflict, authorization, transport.
    public func save(_ blob: Data, precondition: Precondition = .none) async throws(BackupError) -> String {
        let (data, response) = try await send(action: "save", method: "POST", body: blob) { request in
            switch precondition {
            case .none: break
            case .ifMatch(let syncID): request.setValue("\"\(syncID)\"", forHTTPHeaderField: "If-Match")
            case .ifNoneStored: request.setValue("*", forHTTPHeaderField: "If-None-Match")
            }
        }
        guard response.statusCode == 200 else { throw Self.error(response, data) }
        guard let syncID = ServerErrorBody(data).string("sync_id") else { throw .rejected(status: 200, code: "malformed_save_response") }
        return syncID
    }

    /// Loads the current blob, or learns that `ifNoneMatch` is still current.
    ///
    /// - Throws: `BackupError.notFound` when nothing is stored, and the other `BackupError`s.
    public func load(ifNoneMatch syncID: String? = nil) async throws(BackupError) -> LoadResult {
        let (data, response) = try await send(action: "load", method: "GET", body: nil) { request in
            if let syncID { request.setValue("\"\(syncID)\"", forHTTPHeaderField: "If-None-Match") }
        }
        switch response.statusCode {
        case 200:
            guard let etag = response.value(forHTTPHeaderField: "ETag"), etag.count >= 2 else {
                throw .rejected(status: 200, code: "missing_etag")
            }
            return .blob(Snapshot(blob: data, syncID: String(etag.dropFirst().dropLast())))
        case 304:
            return .notModified
        default:
            throw Self.error(response, data)
        }
    }

    private func send(action: String, method: String, body: Data?, configure: (inout URLRequest) -> Void)
        async throws(BackupError) -> (Data, HTTPURLResponse)
    {
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "action", value: action)]
        var request = URLRequest(url: components.url!)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        configure(&request)
        for attempt in 1...2 {
            let token = try await tokens.token()
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (data, response) = try await sender.send(request)
            guard response.statusCode == 401 else { return (data, response) }
            // The session was revoked or expired early: renew once, then give up.
            await tokens.invalidate(token)
            if attempt == 2 { throw .unauthorized }
        }
        throw .unauthorized
    }

    private static func error(_ response: HTTPURLResponse, _ data: Data) -> BackupError {
        let body = ServerErrorBody(data)
        switch (response.statusCode, body.code) {
        case (400, "invalid_json"): return .invalidJSON
        case (400, "invalid_vault_shape"): return .invalidVaultShape(detail: body.string("detail") ?? "")
        case (413, _): return .blobTooLarge
        case (429, _): return .rateLimited(retryAfterSeconds: response.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init) ?? 60)
        case (404, "not_found"): return .notFound
        case (409, _): return .conflict(currentSyncID: body.string("sync_id"), currentUpdatedUtc: body.string("updatedUtc"))
        case (401, _): return .unauthorized
        default: return .rejected(status: response.statusCode, code: body.code)
        }
    }
}
