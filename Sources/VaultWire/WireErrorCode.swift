/// Every error code the server answers with, and the HTTP status that always comes with it.
///
/// The body is `{"error": "<code>", "message": "<text>"}` plus the members a code names below.
public enum WireErrorCode: String, CaseIterable, Sendable {
    /// 401: the bearer token is missing, malformed, expired or not accepted; one body whatever the reason.
    case invalidToken = "invalid_token"
    /// 400: a D1 form without `subject_token` or with the wrong `subject_token_type`; a bad dev-issuer form.
    case invalidRequest = "invalid_request"
    /// 400: a D1 form whose `grant_type` is not RFC 8693 token exchange.
    case unsupportedGrantType = "unsupported_grant_type"
    /// 400: a save body that is not JSON (invalid UTF-8, nesting deeper than 64, syntax).
    case invalidJSON = "invalid_json"
    /// 400: JSON but not a vault blob; `detail` names the member.
    case invalidVaultShape = "invalid_vault_shape"
    /// 400: `If-None-Match` on a save other than `*`.
    case invalidPrecondition = "invalid_precondition"
    /// 400: a load's `sync_id` that is no RFC 3339 UTC timestamp.
    case invalidSyncID = "invalid_sync_id"
    /// 400: an `action` other than save, load, versions or delete.
    case invalidAction = "invalid_action"
    /// 400: a `WalletVault-Write-Key` header that is not base64url of a P-256 point `X ‖ Y`.
    case invalidWriteKey = "invalid_write_key"
    /// 400: a load's `wait` that is no whole number of seconds from 0 to the documented maximum, or one sent with
    /// `sync_id` (only the current version can change).
    case invalidWait = "invalid_wait"
    /// 400: a request framed or addressed ambiguously (RFC 9112): `Content-Length` with `Transfer-Encoding`, two
    /// `Content-Length` values, a `Content-Length` too large to be one, no or two `Host`, NUL, CR or other control
    /// bytes in a header field, a space in a field name, or an encoded NUL in the path or a query value. The
    /// connection closes after the answer.
    case malformedRequest = "malformed_request"
    /// 403: the stored version names a write key and the save or erasure carries no valid `WalletVault-Write-Proof`
    /// by it: only a current member of the vault may replace or erase it (one answer for a missing and a wrong proof).
    case writeProofRequired = "write_proof_required"
    /// 404: nothing stored for this user (at that version), or an unknown path.
    case notFound = "not_found"
    /// 405: the wrong method; `Allow` lists the right ones.
    case methodNotAllowed = "method_not_allowed"
    /// 409: the save's precondition failed; `sync_id` and `updatedUtc` name the stored version (null when none).
    case conflict
    /// 413: the blob is larger than the server's cap.
    case blobTooLarge = "blob_too_large"
    /// 413: a body other than a blob larger than the small-body cap.
    case requestTooLarge = "request_too_large"
    /// 415: a save whose `Content-Type` names a media type other than `application/json`.
    case unsupportedMediaType = "unsupported_media_type"
    /// 429: the hourly save cap; `Retry-After` says when.
    case rateLimited = "rate_limited"
    /// 500: the server's own failure.
    case internalError = "internal_error"
    /// 501: a `Transfer-Encoding` other than `chunked`; the connection closes after the answer.
    case notImplemented = "not_implemented"
    /// 503: storage unreachable, or the server is draining for shutdown; `Retry-After` says when to try again.
    case unavailable

    /// The HTTP status of every answer with this code.
    public var status: Int {
        switch self {
        case .invalidToken: 401
        case .invalidRequest, .unsupportedGrantType, .invalidJSON, .invalidVaultShape, .invalidPrecondition, .invalidSyncID,
            .invalidAction, .invalidWait, .malformedRequest, .invalidWriteKey:
            400
        case .writeProofRequired: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .conflict: 409
        case .blobTooLarge, .requestTooLarge: 413
        case .unsupportedMediaType: 415
        case .rateLimited: 429
        case .internalError: 500
        case .notImplemented: 501
        case .unavailable: 503
        }
    }
}
