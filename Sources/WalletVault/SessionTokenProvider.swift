import Foundation
import VaultCore
import VaultWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Keeps a session token for the backup service fresh, exchanging the app's OIDC token at D1.
///
/// One exchange at a time, shared by every concurrent caller. A token is refreshed in the
/// background once it is older than its lifetime less `refreshMarginSeconds` (the seed: after
/// 8–9 of 10 minutes) while callers keep using it, and awaited only once it has expired.
public actor SessionTokenProvider {
    /// Returns the app's current OIDC access token; may prompt the user. Let a `URLError` (or an error whose
    /// `NSUnderlyingErrorKey` is one) out when the identity provider cannot be reached: it is reported as
    /// `BackupError.transport`, any other error as `.unauthorized`.
    public typealias AccessTokenSource = @Sendable () async throws -> String

    private struct Cached {
        let token: String
        let refreshAt: Int64
        let expiresAt: Int64
    }

    private let endpoint: URL
    private let accessToken: AccessTokenSource
    private let sender: RetryingSender
    private let clock: any WalletClock
    private let refreshMarginSeconds: Int64
    private var current: Cached?
    private var refreshing: Task<Cached, any Error>?

    /// How many D1 exchanges this provider has made, for diagnostics and tests.
    public private(set) var exchangeCount = 0

    /// Creates a provider for the server at `serverURL`.
    public init(
        serverURL: URL, accessToken: @escaping AccessTokenSource, transport: any HTTPTransport = URLSessionTransport(),
        clock: any WalletClock = SystemWalletClock(), retryPolicy: RetryPolicy = RetryPolicy(),
        refreshMarginSeconds: Int64 = 90
    ) {
        endpoint = serverURL.appendingPathComponent(String(WirePath.sessionToken.dropFirst()))
        self.accessToken = accessToken
        self.sender = RetryingSender(transport: transport, policy: retryPolicy, clock: clock)
        self.clock = clock
        self.refreshMarginSeconds = refreshMarginSeconds
    }

    /// A session token valid now.
    ///
    /// - Throws: `BackupError.unauthorized` when the OIDC token is refused or its source fails, `.transport` when the
    ///   source cannot reach its identity provider or the server cannot be reached.
    public func token() async throws(BackupError) -> String {
        let now = clock.now().millisecondsSinceEpoch
        if let current, now < current.expiresAt {
            if now >= current.refreshAt && refreshing == nil {
                // Start the refresh before expiry; this caller still uses the valid token.
                refreshing = Task { try await self.exchangeAndStore() }
            }
            return current.token
        }
        return try await refreshed().token
    }

    /// Forgets `token` after the server refused it, so the next call exchanges anew.
    public func invalidate(_ token: String) {
        if current?.token == token { current = nil }
    }

    private func refreshed() async throws(BackupError) -> Cached {
        let task = refreshing ?? Task { try await self.exchangeAndStore() }
        refreshing = task
        do {
            return try await task.value
        } catch let error as BackupError {
            throw error
        } catch {
            throw .transport("\(type(of: error))")
        }
    }

    private func exchangeAndStore() async throws -> Cached {
        defer { refreshing = nil }
        let cached = try await exchange()
        current = cached
        return cached
    }

    /// What a failure of the app's OIDC token source means: a source that could not reach its identity provider
    /// (a `URLError`, also as the underlying error of the source's own, or a cancelled refresh) is a transport failure
    /// to retry later; anything else (the IdP refused, the user declined) is `.unauthorized`, which tells the app to
    /// sign the user in again, and must not follow from a phone being offline.
    private static func sourceFailure(_ error: any Error) -> BackupError {
        if error is CancellationError { return .transport("the OIDC token source was cancelled") }
        var next: (any Error)? = error
        // Bounded: an error whose underlying chain loops must not hang the exchange.
        for _ in 0..<8 {
            guard let current = next else { break }
            let bridged = current as NSError
            if bridged.domain == NSURLErrorDomain {
                return .transport("the OIDC token source could not reach its identity provider (URL error \(bridged.code))")
            }
            next = bridged.userInfo[NSUnderlyingErrorKey] as? any Error
        }
        return .unauthorized
    }

    private func exchange() async throws(BackupError) -> Cached {
        exchangeCount += 1
        let oidcToken: String
        do { oidcToken = try await accessToken() } catch { throw Self.sourceFailure(error) }
        var request = URLRequest(url: endpoint)
        request.httpMethod = "POST"
        request.setValue("Bearer \(oidcToken)", forHTTPHeaderField: "Authorization")
        let issuedAt = clock.now().millisecondsSinceEpoch
        let (data, response) = try await sender.send(request)
        struct Answer: Decodable {
            let access_token: String
            let expires_in: Int64
        }
        switch response.statusCode {
        case 200:
            guard let answer = try? JSONDecoder().decode(Answer.self, from: data), answer.expires_in > 0 else {
                throw .rejected(status: 200, code: "malformed_token_response")
            }
            let lifetime = answer.expires_in * 1000
            let margin = min(refreshMarginSeconds * 1000, lifetime / 2)
            return Cached(token: answer.access_token, refreshAt: issuedAt + lifetime - margin, expiresAt: issuedAt + lifetime)
        case 401:
            throw .unauthorized
        case 429:
            // A limiter in front of D1 (this server has none): wait as for the save cap, not "sign in again".
            throw .rateLimited(response)
        default:
            throw .rejected(status: response.statusCode, code: ServerErrorBody(data).code)
        }
    }
}
