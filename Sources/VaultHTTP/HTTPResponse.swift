import Foundation

/// One HTTP response, built by a handler or by an error.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields in order; `Content-Type` included.
    public var headers: [(name: String, value: String)]
    /// The body bytes, when the body is not in a file.
    public var body: Data
    /// The body in a file, sent in place of `body`.
    public var file: HTTPFileBody?

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Creates a response whose body is sent from a file.
    public init(status: Int, headers: [(name: String, value: String)] = [], file: HTTPFileBody) {
        self.init(status: status, headers: headers)
        self.file = file
    }

    /// The body's length in bytes, wherever it is.
    public var bodyLength: Int { file?.length ?? body.count }

    /// A JSON response of an encodable value.
    public static func json(_ status: Int, _ value: some Encodable, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    /// The value of a header field, by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
