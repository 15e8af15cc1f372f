import Foundation
import VaultCore
import VaultHTTP
import VaultJSON
import VaultStorage
import VaultWire

/// D2 save and D3 load on `/wallet-backup.ashx`, for the holder of a session token.
struct BackupEndpoint: Sendable {
    let store: any VaultStore
    let sessions: SessionTokenService
    let storageKeys: StorageKeyDeriver
    let rateLimit: SlidingWindowRateLimit
    let clock: any ServerClock
    /// Where a save or an erasure is announced, so long-polls on every node re-read.
    let changes: any BlobChangeFeed
    private let verifiedTokens = VerifiedTokenCache()
    private let parser = JSONParser(maxDepth: 64)
    private let validator = VaultShapeValidator()

    init(
        store: any VaultStore, sessions: SessionTokenService, storageKeys: StorageKeyDeriver,
        rateLimit: SlidingWindowRateLimit, clock: any ServerClock, changes: any BlobChangeFeed
    ) {
        self.store = store
        self.sessions = sessions
        self.storageKeys = storageKeys
        self.rateLimit = rateLimit
        self.clock = clock
        self.changes = changes
    }

    /// What a long-poll refused past a cap is told to wait: a waiting long-poll ends within the longest wait, most much
    /// sooner.
    static let longPollRetryAfterSeconds = 5

    func handle(_ request: HTTPRequest, notes: RequestNotes) throws(APIError) -> HTTPResponse {
        guard let action = request.query[WireName.action].flatMap(BackupAction.init(rawValue:)) else { throw APIError.invalidAction }
        guard action.allowedMethods.contains(request.method) else { throw APIError.methodNotAllowed(allow: action.allowedMethods) }
        let key = try authenticate(request, notes: notes)
        return try answering(notes) {
            switch action {
            case .save: return try save(request, key: key)
            case .versions: return try versions(key: key)
            case .delete: return try delete(request, key: key)
            case .load: return try load(request, key: key)
            }
        }
    }

    /// A load with `wait` (a long-poll): answered now unless the stored version is the one `If-None-Match` names;
    /// then held until a change announced for the user finds a new version on re-reading (200, or 404 after an
    /// erasure), or `wait` seconds pass (304). `finished` is told the answer of a held request and its user's tag (known only once the request was
    /// authenticated here, so a caller's notes made before cannot carry it). Anything else on the
    /// path is answered now as `handle` answers it.
    ///
    /// - Throws: `APIError` as `handle` does, `invalid_wait` for a bad `wait`, and `rate_limited` past a cap.
    func holdLoad(
        _ request: HTTPRequest, notes: RequestNotes, hub: LongPollHub, maxWaitSeconds: Int, rechecks: DispatchQueue,
        draining: Bool, finished: @escaping @Sendable (HTTPResponse, _ user: String?) -> Void
    ) throws(APIError) -> HTTPHoldDecision {
        guard request.method == "GET", request.query[WireName.action] == BackupAction.load.rawValue else {
            return .answer(try handle(request, notes: notes))
        }
        let key = try authenticate(request, notes: notes)
        let user = notes.user
        let seconds = try Self.waitSeconds(request, maximum: maxWaitSeconds)
        let loadNow = { () throws(APIError) -> HTTPResponse in try answering(notes) { try load(request, key: key) } }
        // Without an ETag to compare there is nothing to wait for; at a drain the answer is given at once.
        guard seconds > 0, request.header("if-none-match") != nil, !draining else { return .answer(try loadNow()) }
        let tag = LongPollHub.changeTag(of: key)
        // Read before the load: a change announced after it moves the generation, and the waiter re-checks.
        let generation = hub.generation(of: tag)
        let current = try loadNow()
        guard current.status == 304 else { return .answer(current) }
        let ticket: UInt64
        do {
            ticket = try hub.admit(tag)
        } catch {
            notes.reason = error == .userFull ? "long-poll cap for this user" : "long-poll cap for this node"
            throw APIError(
                .rateLimited, "too many long-polls waiting; retry after \(Self.longPollRetryAfterSeconds) s",
                headers: ["Retry-After": String(Self.longPollRetryAfterSeconds)])
        }
        return .hold(seconds: Double(seconds), fallback: current) { held in
            held.whenAnswered { response in
                hub.leave(ticket)
                finished(response, user)
            }
            let recheck: @Sendable () -> Void = {
                rechecks.async {
                    let answer: HTTPResponse
                    do throws(APIError) {
                        answer = try answering(RequestNotes()) { try load(request, key: key) }
                    } catch {
                        answer = error.response
                    }
                    if answer.status != 304 { held.answer(answer) }
                }
            }
            if hub.watch(ticket, since: generation, recheck: recheck) { recheck() }
        }
    }

    /// The seconds of a load's `wait`, 0 without one.
    ///
    /// - Throws: `APIError(.invalidWait)` for anything but 0 to `maximum` in decimal digits, or a `wait` beside
    ///   `sync_id`.
    static func waitSeconds(_ request: HTTPRequest, maximum: Int) throws(APIError) -> Int {
        guard let text = request.query[WireName.wait] else { return 0 }
        // Three digits at most: the configured maximum is at most 300, and a long run of zeros is no number a client sends.
        guard (1...3).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }), let seconds = Int(text),
            seconds <= maximum
        else { throw APIError(.invalidWait, "wait must be a whole number of seconds from 0 to \(maximum)") }
        guard request.query[WireName.syncID] == nil else {
            throw APIError(.invalidWait, "wait applies to the current version only; drop sync_id")
        }
        return seconds
    }

    /// Runs `body`, turning a store's failure into the API's answer and noting it.
    private func answering(_ notes: RequestNotes, _ body: () throws -> HTTPResponse) throws(APIError) -> HTTPResponse {
        do {
            return try body()
        } catch let error as APIError {
            throw error
        } catch let error as StoreError {
            notes.reason = error.description
            notes.storeFailed = true
            throw error.code == .unavailable ? APIError.unavailable : APIError.internalError
        } catch {
            notes.reason = "\(error)"
            throw APIError.internalError
        }
    }

    private func authenticate(_ request: HTTPRequest, notes: RequestNotes) throws(APIError) -> StorageKey {
        guard let token = request.bearerToken else {
            notes.reason = "no bearer token"
            throw APIError.invalidToken
        }
        let now = clock.now()
        if let cached = verifiedTokens.entry(for: token, now: now) {
            notes.user = cached.userTag
            return cached.key
        }
        do {
            let verified = try sessions.verify(token, now: now)
            let identity = verified.identity
            let key = storageKeys.key(issuer: identity.issuer, authorizedParty: identity.authorizedParty, subject: identity.subject)
            let entry = VerifiedTokenCache.Entry(key: key, userTag: key.tag, validUntil: verified.validUntil)
            verifiedTokens.remember(entry, for: token, now: now)
            notes.user = entry.userTag
            return key
        } catch {
            notes.reason = error.reason
            throw APIError.invalidToken
        }
    }

    private func save(_ request: HTTPRequest, key: StorageKey) throws -> HTTPResponse {
        // A form or multipart body is never a vault blob, and storing it because its bytes happen to parse would
        // let a browser's cross-site form post (which cannot send application/json) write a vault. No
        // Content-Type at all is taken for JSON: curl scripts and older clients send none.
        if let contentType = request.header("content-type"), !Self.isJSON(contentType) {
            throw APIError(
                .unsupportedMediaType, "a save's Content-Type must be application/json",
                headers: ["Accept-Post": "application/json"])
        }
        let blob: JSONValue
        do {
            blob = try parser.parse(request.body)
        } catch {
            if error.code == .duplicateKey { throw APIError.invalidVaultShape("a member name is repeated (\(error.reason))") }
            throw APIError.invalidJSON("the body is not valid JSON: \(error.reason)")
        }
        let header: VaultBlobHeader
        do { header = try validator.validate(blob) } catch { throw APIError.invalidVaultShape(error.detail) }
        let writer = try WriterCredentials(request, action: .save)

        let outcome = try store.save(
            SaveRequest(
                key: key, body: request.body, header: header, precondition: try precondition(request),
                rateLimit: rateLimit, now: clock.now(), writeKey: writer.nextWriteKey, proof: writer.proof))
        switch outcome {
        case .saved(let syncID, let decision):
            changes.publish(LongPollHub.changeTag(of: key))
            struct Saved: Encodable {
                let ok = true
                let sync_id: String
                let bytes: Int
            }
            return .json(
                200, Saved(sync_id: syncID.description, bytes: request.body.count),
                headers: [
                    ("ETag", EntityTag.header(for: syncID)), ("RateLimit-Policy", rateLimit.policyHeader),
                    ("RateLimit", rateLimit.stateHeader(for: decision)),
                ])
        case .conflict(let current):
            var headers: [String: String] = [:]
            if let current { headers["ETag"] = EntityTag.header(for: current.syncID) }
            throw APIError(
                .conflict, "the stored version is not the one this save expected",
                headers: headers, fields: [WireName.syncID: current?.syncID.description, WireName.updatedUtc: current?.updatedUtc])
        case .rateLimited(let decision):
            guard case .limited(let retryAfter) = decision else { throw APIError.internalError }
            throw APIError(
                .rateLimited, "too many saves in the last hour; retry after \(retryAfter) s",
                headers: [
                    "Retry-After": String(retryAfter), "RateLimit-Policy": rateLimit.policyHeader,
                    "RateLimit": rateLimit.stateHeader(for: decision),
                ])
        case .writerRefused:
            throw WriterCredentials.refused
        }
    }

    /// Whether a `Content-Type` value names `application/json`, parameters (`charset=utf-8`) allowed.
    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return mediaType.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }

    private func versions(key: StorageKey) throws -> HTTPResponse {
        let listing = try store.versions(key).map {
            VersionListing.Entry(syncID: $0.syncID.description, bytes: $0.bytes, updatedUtc: $0.updatedUtc, hint: $0.hint)
        }
        return .json(200, VersionListing(versions: listing), headers: [("Cache-Control", "no-store")])
    }

    /// Erases the blob and its history (right to erasure) when the sender proves it is a current member (or the
    /// stored version names no write key); the rate-limit record stays, so erasing cannot reset the hourly cap.
    private func delete(_ request: HTTPRequest, key: StorageKey) throws -> HTTPResponse {
        guard try store.delete(key, proof: try WriterCredentials(request, action: .delete).proof) == .erased else {
            throw WriterCredentials.refused
        }
        changes.publish(LongPollHub.changeTag(of: key))
        return .json(200, ["ok": true])
    }

    private func precondition(_ request: HTTPRequest) throws(APIError) -> SavePrecondition {
        do { return try SavePrecondition(ifMatch: request.header("if-match"), ifNoneMatch: request.header("if-none-match")) } catch {
            throw APIError(error, "on save, If-None-Match supports only *")
        }
    }

    private func load(_ request: HTTPRequest, key: StorageKey) throws -> HTTPResponse {
        let stored: StoredVault?
        if let requested = request.query[WireName.syncID] {
            guard let syncID = UTCTimestamp(rfc3339: requested) else {
                throw APIError(.invalidSyncID, "sync_id must be an RFC 3339 UTC timestamp as returned by save or versions")
            }
            stored = try store.load(key, syncID: syncID)
        } else {
            stored = try store.load(key)
        }
        guard let stored else { throw APIError(.notFound, "nothing is stored for this user at that version") }
        let etag = EntityTag.header(for: stored.syncID)
        if let ifNoneMatch = request.header("if-none-match"), EntityTag.list(ifNoneMatch)?.contains(stored.syncID) ?? true {
            // The 200's length, which a 304 may carry (RFC 9110 §8.6); the transport sends no body with it.
            return HTTPResponse(status: 304, headers: [("ETag", etag), ("Content-Length", String(stored.byteCount))])
        }
        // Typed as the response's labelled pairs: inferred as `[(String, String)]`, it was copied into a new array.
        let headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("ETag", etag), ("Cache-Control", "no-store"),
        ]
        switch stored.content {
        case .bytes(let body):
            return HTTPResponse(status: 200, headers: headers, body: body)
        case .file(let file):
            // Sent from the page cache (sendfile): nothing of the blob passes through the process (issue 31).
            return HTTPResponse(
                status: 200, headers: headers,
                file: HTTPFileBody(offset: file.offset, length: file.length, takeDescriptor: file.takeDescriptor))
        }
    }
}
