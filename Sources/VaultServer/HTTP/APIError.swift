/// An error answer of the API: a status, a stable code and a message, as `{"error", "message"}`.
///
/// Codes are the seed's (`invalid_json`, `invalid_vault_shape`, `blob_too_large`, `rate_limited`,
/// `not_found`) plus this server's documented ones. Messages never quote a token or blob bytes.
public struct APIError: HTTPResponseConvertible, Hashable, CustomStringConvertible {
    /// The HTTP status.
    public let status: Int
    /// The stable machine-readable code.
    public let code: String
    /// A human-readable message.
    public let message: String
    /// Extra header fields, such as `Retry-After` or `Allow`.
    public let headers: [String: String]
    /// Extra string members of the body, such as `detail`.
    public let fields: [String: String?]

    /// Creates an error answer.
    public init(_ status: Int, _ code: String, _ message: String, headers: [String: String] = [:], fields: [String: String?] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.fields = fields
    }

    public var description: String { "\(status) \(code): \(message)" }

    public var response: HTTPResponse {
        var body = fields
        body["error"] = code
        body["message"] = message
        return .json(status, body, headers: headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// 400 `invalid_json`.
    public static func invalidJSON(_ message: String) -> APIError { APIError(400, "invalid_json", message) }
    /// 400 `invalid_vault_shape` with a `detail` naming the field.
    public static func invalidVaultShape(_ detail: String) -> APIError {
        APIError(400, "invalid_vault_shape", "the body is JSON but not a vault blob", fields: ["detail": detail])
    }
    /// 413 `blob_too_large`.
    public static func blobTooLarge(limit: Int) -> APIError {
        APIError(413, "blob_too_large", "the body is larger than \(limit) bytes; split large media out of the vault")
    }
    /// 400 `invalid_action`.
    public static let invalidAction = APIError(400, "invalid_action", "action must be save, load, versions or delete")
    /// 404 `not_found` for an unknown path.
    public static let unknownPath = APIError(404, "not_found", "no such path")
    /// 405 `method_not_allowed` with the `Allow` header.
    public static func methodNotAllowed(allow: [String]) -> APIError {
        let allowed = allow.joined(separator: ", ")
        return APIError(405, "method_not_allowed", "use \(allowed)", headers: ["Allow": allowed])
    }
    /// 401 `invalid_token`: one body whatever the reason, which goes to the log only.
    public static let invalidToken = APIError(
        401, "invalid_token", "the access token is missing, malformed, expired or not accepted here",
        headers: ["WWW-Authenticate": "Bearer error=\"invalid_token\""])
    /// 500 `internal_error`, for failures that are the server's own.
    public static let internalError = APIError(500, "internal_error", "the server failed; try again later")
    /// 503 `unavailable`, when storage is unreachable.
    public static let unavailable = APIError(
        503, "unavailable", "storage is unavailable; retry later", headers: ["Retry-After": "1"])
}
