import Foundation

/// What the HTTP server hands complete requests to.
public protocol HTTPResponder: Sendable {
    /// The largest body accepted for this method and path; larger ones get `tooLargeResponse`.
    func bodyLimit(method: String, path: String) -> Int
    /// The answer when a body exceeds the limit, decided before or while reading it.
    func tooLargeResponse(method: String, path: String, limit: Int) -> HTTPResponse
    /// Answers a complete request; never throws, since every failure has an answer.
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// Whether answering may wait on the disk (a synced commit), so the server should not hold a worker thread
    /// for it.
    func waitsOnStorage(_ request: HTTPRequest) -> Bool
    /// The answer to a request refused for its framing or addressing before its body is read: `status` is 400
    /// (`malformed_request`), 431 (a header section past 16 KiB as sent or 100 fields) or 501 (`not_implemented`, an
    /// unknown transfer coding); the connection closes after it.
    func malformedResponse(method: String, path: String, status: Int, reason: String) -> HTTPResponse
    /// Whether the request may be held open until something happens (a long-poll): such requests go to `hold`.
    func mayHold(_ request: HTTPRequest) -> Bool
    /// Answers a request `mayHold` picked, now or later.
    func hold(_ request: HTTPRequest) -> HTTPHoldDecision
}

extension HTTPResponder {
    /// By default nothing waits on storage.
    public func waitsOnStorage(_ request: HTTPRequest) -> Bool { false }

    /// By default nothing is held.
    public func mayHold(_ request: HTTPRequest) -> Bool { false }

    /// By default the answer is given now.
    public func hold(_ request: HTTPRequest) -> HTTPHoldDecision { .answer(respond(to: request)) }

    /// By default the status with the reason as plain text: the transport knows no application's error body.
    public func malformedResponse(method: String, path: String, status: Int, reason: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(reason.utf8))
    }
}
