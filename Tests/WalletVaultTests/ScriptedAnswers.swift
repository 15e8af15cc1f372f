import Foundation
import Synchronization
import WalletVault

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers long-polls (loads with `wait`), other loads and saves from a script while it has entries for them;
/// everything else, and whatever comes once a script ran out, goes to `inner`.
final class ScriptedAnswers: HTTPTransport, Sendable {
    enum Outcome: Sendable {
        case rateLimited(retryAfter: Int)
        /// A 413 `blob_too_large`, as the server's `limits.max_blob_bytes` gives (the in-process server has no body limit:
        /// its HTTP transport enforces it).
        case blobTooLarge
        /// A 401 `invalid_token`, as for a session the server no longer takes.
        case unauthorized
        case unavailable
        case networkError
        /// A 304 at once, as from a server or proxy that ignores `wait`.
        case notModifiedAtOnce
        /// The request reaches `inner`, which acts on it, and its answer is lost on the way back.
        case answerLost
        /// The request is held on its way (its sender sees a network error) until a `.releasingHeld` request.
        case held
        /// The requests held so far reach `inner` first, and then this one does.
        case releasingHeld
    }

    /// Which requests a script answers.
    enum Requests: Sendable, Hashable {
        case longPolls
        /// Loads without `wait`.
        case loads
        case saves
    }

    private let inner: any HTTPTransport
    private let scripts = Mutex<[Requests: [Outcome]]>([:])
    private let heldRequests = Mutex<[URLRequest]>([])

    init(_ inner: any HTTPTransport) {
        self.inner = inner
    }

    /// Appends `outcomes` for the next `requests`.
    func play(_ outcomes: [Outcome], to requests: Requests = .longPolls) {
        scripts.withLock { $0[requests, default: []] += outcomes }
    }

    private static func requests(_ request: URLRequest) -> Requests? {
        let items = request.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems } ?? []
        if items.contains(where: { $0.name == "wait" }) { return .longPolls }
        if items.contains(where: { $0.name == "action" && $0.value == "save" }) { return .saves }
        if items.contains(where: { $0.name == "action" && $0.value == "load" }) { return .loads }
        return nil
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let next = Self.requests(request).flatMap { requests in
            scripts.withLock { $0[requests]?.isEmpty == false ? $0[requests]?.removeFirst() : nil }
        }
        let status: Int
        var headers = ["Content-Type": "application/json"]
        switch next {
        case nil: return try await inner.send(request)
        case .networkError?: throw URLError(.networkConnectionLost)
        case .answerLost?:
            _ = try await inner.send(request)
            throw URLError(.networkConnectionLost)
        case .held?:
            heldRequests.withLock { $0.append(request) }
            throw URLError(.networkConnectionLost)
        case .releasingHeld?:
            for held in heldRequests.withLock({ held in
                defer { held = [] }
                return held
            }) { _ = try await inner.send(held) }
            return try await inner.send(request)
        case .unavailable?: status = 503
        case .unauthorized?: status = 401
        case .blobTooLarge?:
            let body = Data(#"{"error":"blob_too_large","message":"scripted"}"#.utf8)
            return (body, HTTPURLResponse(url: request.url!, statusCode: 413, httpVersion: "HTTP/1.1", headerFields: headers)!)
        case .notModifiedAtOnce?:
            let etag = request.value(forHTTPHeaderField: "If-None-Match") ?? ""
            let response = HTTPURLResponse(
                url: request.url!, statusCode: 304, httpVersion: "HTTP/1.1", headerFields: ["ETag": etag])!
            return (Data(), response)
        case .rateLimited(let seconds)?:
            status = 429
            headers["Retry-After"] = String(seconds)
        }
        let body = Data(#"{"error":"scripted","message":"scripted"}"#.utf8)
        return (body, HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!)
    }
}
