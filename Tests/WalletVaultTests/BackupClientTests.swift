import Foundation
import Synchronization
import Testing
import VaultCore
import WalletVault

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Session tokens and the backup client, against a scripted server")
struct BackupClientTests {
    let server = URL(string: "http://127.0.0.1:9")!
    let clock = ManualClock()

    func client(_ transport: MockTransport, retry: RetryPolicy = RetryPolicy()) -> (SessionTokenProvider, BackupClient) {
        let tokens = SessionTokenProvider(
            serverURL: server, accessToken: { "oidc" }, transport: transport, clock: clock, retryPolicy: retry)
        return (tokens, BackupClient(serverURL: server, tokens: tokens, transport: transport, clock: clock, retryPolicy: retry))
    }

    /// Mints `session-N` for the N-th exchange and saves successfully.
    static func happyServer() -> MockTransport {
        let minted = Mutex(0)
        return MockTransport { request, _ in
            if request.url!.path.hasSuffix("wallet-session-token.ashx") {
                let number = minted.withLock {
                    $0 += 1
                    return $0
                }
                return (200, [:], jsonBody(["access_token": "session-\(number)", "expires_in": 600]))
            }
            return (
                200, ["ETag": "\"2026-01-01T00:00:00.000Z\""], jsonBody(["ok": true, "sync_id": "2026-01-01T00:00:00.000Z", "bytes": 2])
            )
        }
    }

    @Test func manyConcurrentSavesShareOneExchange() async throws {
        let transport = Self.happyServer()
        let (tokens, backup) = client(transport)
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await backup.save(Data("{}".utf8)) } }
            for try await syncID in group { #expect(syncID == "2026-01-01T00:00:00.000Z") }
        }
        #expect(transport.count(path: "wallet-session-token.ashx") == 1)
        #expect(await tokens.exchangeCount == 1)
        #expect(
            transport.requests.filter { $0.url!.path.hasSuffix("wallet-backup.ashx") }
                .allSatisfy { $0.value(forHTTPHeaderField: "Authorization") == "Bearer session-1" })
    }

    @Test func refreshesBeforeExpiryWhileStillServingTheOldToken() async throws {
        let transport = Self.happyServer()
        let (tokens, _) = client(transport)
        #expect(try await tokens.token() == "session-1")
        clock.advance(seconds: 500)
        #expect(try await tokens.token() == "session-1")
        #expect(try await tokens.token() == "session-1")
        clock.advance(seconds: 20)
        // The background refresh started at 8.5 minutes has landed by now.
        for _ in 0..<100 where try await tokens.token() != "session-2" { await Task.yield() }
        #expect(try await tokens.token() == "session-2")
        #expect(await tokens.exchangeCount == 2)
        clock.advance(seconds: 601)
        #expect(try await tokens.token() == "session-3")
    }

    /// An OIDC token source that cannot reach its identity provider (a phone offline when its token needs refreshing)
    /// is a transport failure to retry later, not `.unauthorized`, which tells the app to sign the user in again; one
    /// that fails otherwise (the IdP refused, the user declined) is `.unauthorized`.
    @Test(arguments: [
        (URLError(.notConnectedToInternet) as any Error, true),
        (NSError(domain: "IdP", code: 1, userInfo: [NSUnderlyingErrorKey: URLError(.timedOut)]), true),
        (CancellationError(), true),
        (NSError(domain: "IdP", code: 401), false),
    ])
    func aTokenSourceThatCannotReachItsIdPIsATransportFailure(failure: any Error, isTransport: Bool) async throws {
        let tokens = SessionTokenProvider(
            serverURL: server, accessToken: { throw failure }, transport: Self.happyServer(), clock: clock)
        do throws(BackupError) {
            _ = try await tokens.token()
            Issue.record("a token without an OIDC token")
        } catch {
            if isTransport {
                guard case .transport = error else {
                    Issue.record("\(failure) became \(error)")
                    return
                }
            } else {
                #expect(error == .unauthorized)
            }
        }
    }

    /// An OIDC token source that does not answer fails every caller waiting on its exchange with `.transport` once its
    /// timeout has passed, and the next call starts a new exchange rather than wait on the stuck one; before, every
    /// caller waited as long as the source did. The source here ignores cancellation, the worst case; it answers at
    /// the end, late.
    @Test func aTokenSourceThatOutlastsItsTimeoutFailsAsTransportAndTheNextCallStartsAfresh() async throws {
        let calls = Mutex(0)
        let stuck = Mutex<CheckedContinuation<String, Never>?>(nil)
        let tokens = SessionTokenProvider(
            serverURL: server,
            accessToken: {
                guard
                    calls.withLock({
                        $0 += 1
                        return $0
                    }) == 1
                else { return "oidc" }
                return await withCheckedContinuation { continuation in stuck.withLock { $0 = continuation } }
            }, transport: Self.happyServer(), clock: clock, accessTokenTimeoutSeconds: 0.3)
        let failures = await withTaskGroup(of: BackupError?.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    do throws(BackupError) {
                        _ = try await tokens.token()
                        return nil
                    } catch { return error }
                }
            }
            return await group.reduce(into: [BackupError?]()) { $0.append($1) }
        }
        for failure in failures {
            guard case .transport = failure else {
                Issue.record("a caller of a stuck exchange got \(String(describing: failure))")
                continue
            }
        }
        // The next call starts an exchange of its own, which the source answers, without the stuck one ending.
        let token = await Self.eventualToken(tokens)
        #expect(token?.hasPrefix("session-") == true)
        #expect(calls.withLock { $0 } >= 2)
        stuck.withLock { $0.take() }?.resume(returning: "oidc")
    }

    /// A background refresh whose token source sticks ends at the source's timeout though no one waits on it, so the
    /// first caller after the token expires starts a new exchange at once rather than wait on the stuck one.
    @Test func aStuckBackgroundRefreshEndsAtItsTimeoutAndTheFirstCallerAfterExpiryStartsAfresh() async throws {
        let stickNext = Mutex(false)
        let stuck = Mutex<CheckedContinuation<String, Never>?>(nil)
        let tokens = SessionTokenProvider(
            serverURL: server,
            accessToken: {
                let sticks = stickNext.withLock { stick in
                    defer { stick = false }
                    return stick
                }
                guard sticks else { return "oidc" }
                return await withCheckedContinuation { continuation in stuck.withLock { $0 = continuation } }
            }, transport: Self.happyServer(), clock: clock, accessTokenTimeoutSeconds: 1)
        let first = try #require(await Self.eventualToken(tokens))
        stickNext.withLock { $0 = true }
        clock.advance(seconds: 520)
        // Inside the refresh margin: the refresh starts in the background and sticks; the valid token is handed out.
        #expect(try await tokens.token() == first)
        for _ in 0..<5000 where stuck.withLock({ $0 == nil }) { try await Task.sleep(nanoseconds: 1_000_000) }
        try await Task.sleep(nanoseconds: 1_100_000_000)
        clock.advance(seconds: 100)
        let after = await Self.eventualToken(tokens)
        #expect(after != nil && after != first)
        // Still unanswered: the token came without anyone waiting for the stuck source.
        #expect(stuck.withLock { $0 != nil })
        stuck.withLock { $0.take() }?.resume(returning: "oidc")
    }

    /// A timeout of `.infinity` (or one past what nanoseconds in a `UInt64` hold) waits for the source as long as it
    /// takes; converting it to a sleep trapped.
    @Test(arguments: [Double.infinity, 1e12])
    func anEndlessTimeoutWaitsForTheSource(seconds: Double) async throws {
        let tokens = SessionTokenProvider(
            serverURL: server, accessToken: { "oidc" }, transport: Self.happyServer(), clock: clock,
            accessTokenTimeoutSeconds: seconds)
        #expect(try await tokens.token() == "session-1")
    }

    /// A token from `tokens`, asked again (at most 20 times) while the exchange fails: on a machine so loaded that even
    /// an answering source outlasts a test's short timeout, each call starts a new exchange.
    static func eventualToken(_ tokens: SessionTokenProvider) async -> String? {
        for _ in 0..<20 {
            if let token = try? await tokens.token() { return token }
        }
        return nil
    }

    /// A 429 from the session-token endpoint (a limiter in front of it) is `.rateLimited` with its `Retry-After`, as a
    /// save's is, not a `.rejected` the app cannot act on.
    @Test func aRateLimitedExchangeIsRateLimited() async throws {
        let transport = MockTransport { _, _ in (429, ["Retry-After": "42"], jsonBody(["error": "rate_limited"])) }
        let (tokens, _) = client(transport)
        do throws(BackupError) {
            _ = try await tokens.token()
            Issue.record("a token from a 429")
        } catch {
            #expect(error == .rateLimited(retryAfterSeconds: 42))
        }
    }

    @Test func a401RenewsOnceAndRetriesOnce() async throws {
        let rejected = Mutex(0)
        let transport = MockTransport { request, _ in
            if request.url!.path.hasSuffix("wallet-session-token.ashx") { return (200, [:], sessionAnswer) }
            if rejected.withLock({
                $0 += 1
                return $0
            }) == 1 {
                return (401, [:], jsonBody(["error": "invalid_token"]))
            }
            return (
                200, ["ETag": "\"2026-01-01T00:00:00.000Z\""], jsonBody(["ok": true, "sync_id": "2026-01-01T00:00:00.000Z", "bytes": 2])
            )
        }
        let (_, backup) = client(transport)
        #expect(try await backup.save(Data("{}".utf8)) == "2026-01-01T00:00:00.000Z")
        #expect(transport.count(path: "wallet-session-token.ashx") == 2)
        #expect(transport.count(path: "wallet-backup.ashx") == 2)

        let alwaysRefused = MockTransport { request, _ in
            request.url!.path.hasSuffix("wallet-session-token.ashx") ? (200, [:], sessionAnswer) : (401, [:], Data())
        }
        let (_, refusedBackup) = client(alwaysRefused)
        await #expect(throws: BackupError.unauthorized) { try await refusedBackup.save(Data("{}".utf8)) }
        #expect(alwaysRefused.count(path: "wallet-session-token.ashx") == 2)
        #expect(alwaysRefused.count(path: "wallet-backup.ashx") == 2)
    }

    @Test func serverErrorsAreRetriedWithBoundedJitteredBackoff() async throws {
        let transport = MockTransport { request, _ in
            request.url!.path.hasSuffix("wallet-session-token.ashx") ? (200, [:], sessionAnswer) : (503, [:], Data())
        }
        let (_, backup) = client(transport, retry: RetryPolicy(maxAttempts: 4, baseDelaySeconds: 1, maxDelaySeconds: 3))
        await #expect(throws: BackupError.serverUnavailable(status: 503)) { try await backup.save(Data("{}".utf8)) }
        #expect(transport.count(path: "wallet-backup.ashx") == 4)
        let caps: [Double] = [1, 2, 3]
        #expect(clock.sleeps.count == 3)
        #expect(zip(clock.sleeps, caps).allSatisfy { $0 >= 0 && $0 <= $1 })
    }

    @Test func clientErrorsAreTypedAndNotRetried() async throws {
        let answers: [(Int, [String: String], [String: Any], BackupError)] = [
            (400, [:], ["error": "invalid_json"], .invalidJSON),
            (400, [:], ["error": "invalid_vault_shape", "detail": "iv is missing"], .invalidVaultShape(detail: "iv is missing")),
            (413, [:], ["error": "blob_too_large"], .blobTooLarge),
            (429, ["Retry-After": "120"], ["error": "rate_limited"], .rateLimited(retryAfterSeconds: 120)),
            (409, [:], ["error": "conflict", "sync_id": "a", "updatedUtc": "b"], .conflict(currentSyncID: "a", currentUpdatedUtc: "b")),
            (404, [:], ["error": "not_found"], .notFound),
        ]
        for (status, headers, body, expected) in answers {
            let encoded = jsonBody(body)
            let transport = MockTransport { request, _ in
                request.url!.path.hasSuffix("wallet-session-token.ashx") ? (200, [:], sessionAnswer) : (status, headers, encoded)
            }
            let (_, backup) = client(transport)
            await #expect(throws: expected) { try await backup.save(Data("{}".utf8)) }
            #expect(transport.count(path: "wallet-backup.ashx") == 1)
        }
    }

    @Test func loadReadsTheETagAndNotModified() async throws {
        let version = "2026-08-12T19:00:00.000Z"
        let transport = MockTransport { request, _ in
            if request.url!.path.hasSuffix("wallet-session-token.ashx") { return (200, [:], sessionAnswer) }
            if request.value(forHTTPHeaderField: "If-None-Match") == "\"\(version)\"" { return (304, ["ETag": "\"\(version)\""], Data()) }
            return (200, ["ETag": "\"\(version)\""], Data("{\"v\":1}".utf8))
        }
        let (_, backup) = client(transport)
        #expect(try await backup.load() == .blob(.init(blob: Data("{\"v\":1}".utf8), syncID: version)))
        #expect(try await backup.load(ifNoneMatch: version) == .notModified)
    }

    @Test func aNotModifiedToALoadThatNamedNoVersionIsTheServersFault() async throws {
        // A lying server or a confused cache: `.notModified` would tell a device with no copy (a recovery, a pairing
        // confirmation) that its missing copy is current.
        let transport = MockTransport { request, _ in
            request.url!.path.hasSuffix("wallet-session-token.ashx") ? (200, [:], sessionAnswer) : (304, [:], Data())
        }
        let (_, backup) = client(transport)
        await #expect(throws: BackupError.rejected(status: 304, code: "unconditional_not_modified")) { try await backup.load() }
        #expect(try await backup.load(ifNoneMatch: "2026-08-12T19:00:00.000Z") == .notModified)
    }

    @Test func anAnswerThatNamesNoVersionOrTheWrongOneIsRefused() async throws {
        for etag in [nil, "\"v1\"", "2026-08-12T19:00:00.000Z", "\"2026-08-12T19:00:00.000Z\", \"2026-08-12T19:00:00.001Z\""] {
            let transport = MockTransport { request, _ in
                request.url!.path.hasSuffix("wallet-session-token.ashx")
                    ? (200, [:], sessionAnswer)
                    : (200, etag.map { ["ETag": $0] } ?? [:], Data("{}".utf8))
            }
            let (_, backup) = client(transport)
            await #expect(throws: BackupError.rejected(status: 200, code: "missing_etag")) { try await backup.load() }
        }
        // A server asked for one kept version that hands back another.
        let transport = MockTransport { request, _ in
            request.url!.path.hasSuffix("wallet-session-token.ashx")
                ? (200, [:], sessionAnswer)
                : (200, ["ETag": "\"2026-08-12T19:00:00.001Z\""], Data("{}".utf8))
        }
        let (_, backup) = client(transport)
        await #expect(throws: BackupError.rejected(status: 200, code: "wrong_version")) {
            try await backup.load(version: "2026-08-12T19:00:00.000Z")
        }
        let sent = try #require(transport.requests.last?.url)
        #expect(sent.query == "action=load&sync_id=2026-08-12T19:00:00.000Z")
    }

    /// A save answer whose `sync_id` is no timestamp is refused: kept as this device's version, it would become an
    /// `If-Match` with no entity tag in it, which a client library may drop, turning the next save unconditional
    /// (review of 2026-12-03).
    @Test func aSaveAnswerWhoseSyncIDIsNoTimestampIsRefused() async throws {
        for syncID in ["", "v1", "2026-08-12T19:00:00+02:00", "\"2026-08-12T19:00:00.000Z\""] {
            let transport = MockTransport { request, _ in
                request.url!.path.hasSuffix("wallet-session-token.ashx")
                    ? (200, [:], sessionAnswer) : (200, [:], jsonBody(["ok": true, "sync_id": syncID, "bytes": 2]))
            }
            let (_, backup) = client(transport)
            await #expect(throws: BackupError.rejected(status: 200, code: "malformed_save_response")) {
                try await backup.save(Data("{}".utf8))
            }
        }
    }

    @Test func versionsAndErasureSpeakTheContract() async throws {
        let listing = Data(
            #"{"versions":[{"sync_id":"2026-08-12T19:00:00.001Z","bytes":120,"updatedUtc":"2026-08-12T19:00:00Z","hint":null}]}"#.utf8)
        let transport = MockTransport { request, _ in
            if request.url!.path.hasSuffix("wallet-session-token.ashx") { return (200, [:], sessionAnswer) }
            if request.url!.query == "action=versions", request.httpMethod == "GET" { return (200, [:], listing) }
            if request.url!.query == "action=delete", request.httpMethod == "POST" { return (200, [:], jsonBody(["ok": true])) }
            return (400, [:], jsonBody(["error": "invalid_action"]))
        }
        let (_, backup) = client(transport)
        #expect(
            try await backup.versions() == [
                .init(syncID: "2026-08-12T19:00:00.001Z", bytes: 120, updatedUtc: "2026-08-12T19:00:00Z", hint: nil)
            ])
        try await backup.erase()
        let garbled = MockTransport { request, _ in
            request.url!.path.hasSuffix("wallet-session-token.ashx") ? (200, [:], sessionAnswer) : (200, [:], Data("[]".utf8))
        }
        await #expect(throws: BackupError.rejected(status: 200, code: "malformed_versions")) { try await client(garbled).1.versions() }
    }

    @Test func cancellationStopsRetrying() async throws {
        let transport = MockTransport { request, _ in
            request.url!.path.hasSuffix("wallet-session-token.ashx") ? (200, [:], sessionAnswer) : (503, [:], Data())
        }
        let (_, backup) = client(transport, retry: RetryPolicy(maxAttempts: 1000, baseDelaySeconds: 0.01, maxDelaySeconds: 0.01))
        let task = Task { try await backup.save(Data("{}".utf8)) }
        task.cancel()
        await #expect(throws: BackupError.self) { try await task.value }
        #expect(transport.count(path: "wallet-backup.ashx") < 1000)
    }
}
