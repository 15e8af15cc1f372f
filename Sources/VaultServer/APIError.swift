import VaultHTTP
import VaultWire

/// An error answer of the API: a status, a stable code and a message, as `{"error", "message"}`.
///
/// The code and its status come from the wire contract (`WireErrorCode`), which the SDK reads too.
/// Messages never quote a token or blob bytes.
public struct APIError: HTTPResponseConvertible, Hashable, CustomStringConvertible {
    /// The HTTP status, the code's.
    public var status: Int { code.status }
    /// The stable machine-readable code.
    public let code: WireErrorCode
    /// A human-readable message.
    public let message: String
    /// Extra header fields, such as `Retry-After` or `Allow`.
    public let headers: [String: String]
    /// Extra string members of the body, such as `detail`.
    public let fields: [String: String?]

    /// Creates an error answer.
    public init(_ code: WireErrorCode, _ message: String, headers: [String: String] = [:], fields: [String: String?] = [:]) {
        self.code = code
        self.message = message
        self.headers = headers
        self.fields = fields
    }

    public var description: String { "\(status) \(code.rawValue): \(message)" }

    public var response: HTTPResponse {
        var body = fields
        body[WireName.error] = code.rawValue
        body[WireName.message] = message
        return .json(status, body, headers: headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// 400 `invalid_json`.
    public static func invalidJSON(_ message: String) -> APIError { APIError(.invalidJSON, message) }
    /// 400 `invalid_vault_shape` with a `detail` naming the field.
    public static func invalidVaultShape(_ detail: String) -> APIError {
        APIError(.invalidVaultShape, "the body is JSON but not a vault blob", fields: [WireName.detail: detail])
    }
    /// 413 `blob_too_large`.
    public static func blobTooLarge(limit: Int) -> APIError {
        APIError(.blobTooLarge, "the body is larger than \(limit) bytes; split large media out of the vault")
    }
    /// 400 `invalid_action`.
    public static let invalidAction = APIError(.invalidAction, "action must be save, load, versions or delete")
    /// 404 `not_found` for an unknown path.
    public static let unknownPath = APIError(.notFound, "no such path")
    /// 405 `method_not_allowed` with the `Allow` header.
    public static func methodNotAllowed(allow: [String]) -> APIError {
        let allowed = allow.joined(separator: ", ")
        return APIError(.methodNotAllowed, "use \(allowed)", headers: ["Allow": allowed])
    }
    /// 401 `invalid_token`: one body whatever the reason, which goes to the log only.
    public static let invalidToken = APIError(
        .invalidToken, "the access token is missing, malformed, expired or not accepted here",
        headers: ["WWW-Authenticate": "Bearer error=\"invalid_token\""])
    /// 500 `internal_error`, for failures that are the server's own.
    public static let internalError = APIError(.internalError, "the server failed; try again later")
    /// 503 `unavailable`, when storage is unreachable.
    public static let unavailable = APIError(
        .unavailable, "storage is unavailable; retry later", headers: ["Retry-After": "1"])
}
