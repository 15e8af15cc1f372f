import Foundation

/// An answer as a test reads it: status, headers (names as sent), body.
public struct APIReply: Sendable {
    /// The status code.
    public let status: Int
    /// The header fields.
    public let headers: [String: String]
    /// The body.
    public let body: Data

    /// Creates a reply.
    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body as a JSON object, or empty when it is not one.
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }

    /// A header field by name, in any case.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
