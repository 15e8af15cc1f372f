import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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

    /// The reply a URL response and its body make, header names as the response gives them.
    init(_ body: Data, _ response: HTTPURLResponse) {
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields { fields["\(name)"] = "\(value)" }
        self.init(status: response.statusCode, headers: fields, body: body)
    }
}

extension URLRequest {
    /// A request for `pathAndQuery` relative to `baseURL`, with `headers` set.
    init(_ method: String, _ pathAndQuery: String, relativeTo baseURL: URL, headers: [String: String]) {
        self.init(url: URL(string: pathAndQuery, relativeTo: baseURL)!)
        httpMethod = method
        for (name, value) in headers { setValue(value, forHTTPHeaderField: name) }
    }
}
