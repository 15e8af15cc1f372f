import Foundation
import VaultCore
import VaultWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The backup service's actions (D2 save, D3 load, versions, erasure) with typed errors, session renewal and retries.
///
/// A 401 renews the session token once and retries once; a second 401 is `unauthorized`.
/// Network errors and 5xx are retried with jittered exponential backoff; other 4xx are not.
/// Paths, actions, error codes, entity tags and preconditions are the wire contract's (`VaultWire`), as the server's.
public struct BackupClient: Sendable {
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

    /// One kept version, as `action=versions` lists it.
    public typealias Version = VersionListing.Entry

    private let endpoint: URL
    private let tokens: SessionTokenProvider
    private let sender: RetryingSender

    /// Creates a client for the server at `serverURL`.
    public init(
        serverURL: URL, tokens: SessionTokenProvider, transport: any HTTPTransport = URLSessionTransport(),
        clock: any WalletClock = SystemWalletClock(), retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        endpoint = serverURL.appendingPathComponent(String(WirePath.backup.dropFirst()))
        self.tokens = tokens
        sender = RetryingSender(transport: transport, policy: retryPolicy, clock: clock)
    }

    /// Saves a blob and returns its new version; with `writer`, the save names the new version's write key and,
    /// when `precondition` names the one version it replaces, proves the right to replace it.
    ///
    /// - Throws: `BackupError` for every refusal: shape, size, rate limit, conflict, writer proof, authorization,
    ///   transport.
    public func save(_ blob: Data, precondition: SavePrecondition = .none, writer: WriterKeys? = nil) async throws(BackupError)
        -> String
    {
        let replaced: String? = if case .matches(let versions) = precondition, versions.count == 1 { versions[0].description } else { nil }
        let writerHeaders = try writer?.headers(action: .save, storedSyncID: replaced, body: blob) ?? []
        let (data, response) = try await send(.save, body: blob) { request in
            if let header = precondition.header { request.setValue(header.value, forHTTPHeaderField: header.name) }
            for header in writerHeaders { request.setValue(header.value, forHTTPHeaderField: header.name) }
        }
        guard response.statusCode == 200 else { throw Self.error(response, data) }
        // Kept as this device's version, a sync ID that is no timestamp would go out as an `If-Match` naming no
        // entity tag, which a client library may drop as empty: the next save would then be unconditional.
        guard let syncID = ServerErrorBody(data).string(WireName.syncID), UTCTimestamp(rfc3339: syncID) != nil else {
            throw .rejected(status: 200, code: "malformed_save_response")
        }
        return syncID
    }

    /// Loads the current blob, or learns that `ifNoneMatch` is still current; with `waitSeconds` (up to 60, the
    /// server's maximum) and `ifNoneMatch`, the server holds the request until the blob changes or the time passes (a
    /// long-poll), so `.notModified` then means nothing changed for that long.
    ///
    /// - Throws: `BackupError.notFound` when nothing is stored, `.rateLimited` when the server holds as many
    ///   long-polls as it allows, and the other `BackupError`s.
    public func load(ifNoneMatch syncID: String? = nil, waitSeconds: Int = 0) async throws(BackupError) -> LoadResult {
        let tag = syncID.flatMap(UTCTimestamp.init(rfc3339:))
        let waits = waitSeconds > 0 && tag != nil
        let query = waits ? [URLQueryItem(name: WireName.wait, value: String(waitSeconds))] : []
        let (data, response) = try await send(.load, body: nil, query: query) { request in
            if let tag { request.setValue(EntityTag.header(for: tag), forHTTPHeaderField: "If-None-Match") }
            // The answer may come only at the end of the wait: the request must not time out before it.
            if waits { request.timeoutInterval = Double(waitSeconds) + 15 }
        }
        switch response.statusCode {
        case 200: return .blob(Snapshot(blob: data, syncID: try Self.version(response)))
        // A 304 answers only a conditional load: to one that named no version it is the server's fault, not a sign
        // that this device's copy (which it may not have) is current.
        case 304 where tag != nil: return .notModified
        case 304: throw .rejected(status: 304, code: "unconditional_not_modified")
        default: throw Self.error(response, data)
        }
    }

    /// Loads a kept older version by its `sync_id` (from `versions()`).
    ///
    /// - Throws: `BackupError.notFound` when that version is not kept, `.rejected` with `invalid_sync_id` or
    ///   `wrong_version` when the server answers for another one, and the other `BackupError`s.
    public func load(version syncID: String) async throws(BackupError) -> Snapshot {
        let (data, response) = try await send(.load, body: nil, query: [URLQueryItem(name: WireName.syncID, value: syncID)]) { _ in }
        guard response.statusCode == 200 else { throw Self.error(response, data) }
        let served = try Self.version(response)
        guard UTCTimestamp(rfc3339: served) == UTCTimestamp(rfc3339: syncID) else { throw .rejected(status: 200, code: "wrong_version") }
        return Snapshot(blob: data, syncID: served)
    }

    /// The kept versions, newest first.
    ///
    /// - Throws: `BackupError` (`.rejected` with `malformed_versions` for an answer that is not the documented list).
    public func versions() async throws(BackupError) -> [Version] {
        let (data, response) = try await send(.versions, body: nil) { _ in }
        guard response.statusCode == 200 else { throw Self.error(response, data) }
        guard let listing = try? JSONDecoder().decode(VersionListing.self, from: data) else {
            throw .rejected(status: 200, code: "malformed_versions")
        }
        return listing.versions
    }

    /// Erases the stored blob and every kept version (right to erasure); succeeds when nothing was stored too.
    ///
    /// With `writer` and `storedSyncID` (the current version), the request proves the right to erase it: a server
    /// refuses an erasure without that proof once the stored version names a write key.
    /// - Throws: `BackupError` for an unauthorized or failed request, `.writerRefused` without a valid proof.
    public func erase(writer: WriterKeys? = nil, storedSyncID: String? = nil) async throws(BackupError) {
        let writerHeaders = try writer?.headers(action: .delete, storedSyncID: storedSyncID, body: Data()) ?? []
        let (data, response) = try await send(.delete, body: nil) { request in
            for header in writerHeaders { request.setValue(header.value, forHTTPHeaderField: header.name) }
        }
        guard response.statusCode == 200 else { throw Self.error(response, data) }
    }

    /// The version an answer's `ETag` names.
    private static func version(_ response: HTTPURLResponse) throws(BackupError) -> String {
        guard let etag = response.value(forHTTPHeaderField: "ETag"), let syncID = EntityTag.syncID(etag) else {
            throw .rejected(status: response.statusCode, code: "missing_etag")
        }
        return syncID.description
    }

    private func send(_ action: BackupAction, body: Data?, query: [URLQueryItem] = [], configure: (inout URLRequest) -> Void)
        async throws(BackupError) -> (Data, HTTPURLResponse)
    {
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: WireName.action, value: action.rawValue)] + query
        var request = URLRequest(url: components.url!)
        request.httpMethod = action.method
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
        switch WireErrorCode(rawValue: body.code) {
        case .invalidJSON?: return .invalidJSON
        case .invalidVaultShape?: return .invalidVaultShape(detail: body.string(WireName.detail) ?? "")
        case .notFound?: return .notFound
        case .writeProofRequired?: return .writerRefused
        default: break
        }
        // Statuses decide where a proxy in between may have answered without the contract's body.
        switch response.statusCode {
        case WireErrorCode.blobTooLarge.status: return .blobTooLarge
        case WireErrorCode.rateLimited.status: return .rateLimited(response)
        case WireErrorCode.conflict.status:
            return .conflict(currentSyncID: body.string(WireName.syncID), currentUpdatedUtc: body.string(WireName.updatedUtc))
        case WireErrorCode.invalidToken.status: return .unauthorized
        default: return .rejected(status: response.statusCode, code: body.code)
        }
    }
}

extension BackupError {
    /// The 429 `response`, with its `Retry-After` in seconds (60 when it names none).
    static func rateLimited(_ response: HTTPURLResponse) -> BackupError {
        .rateLimited(retryAfterSeconds: response.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init) ?? 60)
    }
}
