import Foundation

/// One HTTP request as the handlers see it: already read in full and size-capped.
public struct HTTPRequest: Sendable {
    /// The method, upper case as sent.
    public var method: String
    /// The path without the query string.
    public var path: String
    /// Query arguments by name as sent, percent-decoded; a repeated name keeps its first value.
    public var query: [String: String]
    /// Header fields by lower-cased name; repeated fields are joined with ", ".
    public var headers: [String: String]
    /// The request body.
    public var body: Data
    /// The peer's IP address, when known.
    public var remoteAddress: String?

    /// Creates a request.
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: Data = Data(), remoteAddress: String? = nil
    ) {
        self.init(
            method: method, path: path, query: query,
            lowercasedHeaders: Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { "\($0), \($1)" }),
            body: body, remoteAddress: remoteAddress)
    }

    /// Creates a request whose header names are lower-cased already, repeats joined (as `HTTPServer` collects
    /// them), without lower-casing and re-hashing them a second time.
    init(
        method: String, path: String, query: [String: String], lowercasedHeaders: [String: String], body: Data,
        remoteAddress: String?
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = lowercasedHeaders
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The value of a header field, by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    /// The token of an `Authorization: Bearer` header, if there is exactly one well-formed one.
    public var bearerToken: String? {
        guard let value = headers["authorization"], value.utf8.count > 7 else { return nil }
        // The scheme name is case-insensitive (RFC 9110 §11.1).
        // Compared byte by byte: lower-casing the scheme into an array first was an allocation on every request.
        guard zip(value.utf8.prefix(7), "bearer ".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        // Anything after the scheme is the token; a malformed one fails verification like any other.
        let token = value.utf8.dropFirst(7)
        return token.isEmpty ? nil : String(token)
    }
}
