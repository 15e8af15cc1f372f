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
    private let accessTokenTimeoutSeconds: Double
    private var current: Cached?
    private var refreshing: Task<Cached, any Error>?

    /// How many D1 exchanges this provider has made, for diagnostics and tests.
    public private(set) var exchangeCount = 0

    /// Creates a provider for the server at `serverURL`.
    ///
    /// An OIDC token source that has not answered `accessTokenTimeoutSeconds` after it was asked, in real time, is
    /// cancelled and the exchange fails with `.transport`: every caller waits for the one exchange, so a source that
    /// hangs would otherwise hold them all once the token has expired. A source that shows a sign-in prompt needs a
    /// timeout longer than the prompt; `.infinity` waits for the source as long as it takes.
    public init(
        serverURL: URL, accessToken: @escaping AccessTokenSource, transport: any HTTPTransport = URLSessionTransport(),
        clock: any WalletClock = SystemWalletClock(), retryPolicy: RetryPolicy = RetryPolicy(),
        refreshMarginSeconds: Int64 = 90, accessTokenTimeoutSeconds: Double = 60
    ) {
        endpoint = serverURL.appendingPathComponent(String(WirePath.sessionToken.dropFirst()))
        self.accessToken = accessToken
        self.sender = RetryingSender(transport: transport, policy: retryPolicy, clock: clock)
        self.clock = clock
        self.refreshMarginSeconds = refreshMarginSeconds
        self.accessTokenTimeoutSeconds = accessTokenTimeoutSeconds
    }

    /// A session token valid now.
    ///
    /// - Throws: `BackupError.unauthorized` when the OIDC token is refused or its source fails, `.transport` when the
    ///   source cannot reach its identity provider or does not answer in time, or the server cannot be reached.
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

    /// The token source's lateness, seen by `outcome(of:within:)`.
    private struct SourceTimeout: Error {}

    /// The outcome of `source`, or `SourceTimeout` once `seconds` have passed without one: awaiting the task's value
    /// alone would wait as long as the app's source does, and a task's value does not end when it is cancelled.
    private static func outcome(of source: Task<String, any Error>, within seconds: Double) async -> Result<String, any Error> {
        let waiter = OutcomeWaiter<String>()
        return await withCheckedContinuation { continuation in
            waiter.start(continuation)
            let timer = Task {
                // No timeout at all past UInt64's nanoseconds (some 584 years, or `.infinity`): the conversion would trap.
                let nanoseconds = max(0, seconds) * 1_000_000_000
                guard nanoseconds < Double(UInt64.max) else { return }
                // Cancelled means the outcome came first: a timeout then would race it.
                guard (try? await Task.sleep(nanoseconds: UInt64(nanoseconds))) != nil else { return }
                waiter.finish(.failure(SourceTimeout()))
            }
            Task {
                let result = await source.result
                waiter.finish(result)
                timer.cancel()
            }
        }
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
        // Detached: a source that blocks its thread must not block this actor, which its timeout needs.
        let source = Task.detached { [accessToken] in try await accessToken() }
        let oidcToken: String
        switch await Self.outcome(of: source, within: accessTokenTimeoutSeconds) {
        case .success(let token):
            oidcToken = token
        case .failure(is SourceTimeout):
            // The exchange ends here, and its waiters with it; a source that ignores the cancellation is left behind.
            source.cancel()
            throw .transport("the OIDC token source did not answer within \(accessTokenTimeoutSeconds) s")
        case .failure(let error):
            throw Self.sourceFailure(error)
        }
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

/// Hands one outcome to a waiting continuation, whichever of its racers comes first.
private final class OutcomeWaiter<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `continuation` is only touched under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Result<Value, any Error>, Never>?

    func start(_ continuation: CheckedContinuation<Result<Value, any Error>, Never>) {
        lock.withLock { self.continuation = continuation }
    }

    func finish(_ outcome: Result<Value, any Error>) {
        let waiting = lock.withLock { () -> CheckedContinuation<Result<Value, any Error>, Never>? in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: outcome)
    }
}
