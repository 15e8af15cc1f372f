import Foundation
import VaultCore

/// Every answer of the backup service that is not a success, plus transport failures.
///
/// Messages never contain tokens or vault bytes.
public enum BackupError: Error, Sendable, Equatable {
    /// 400 `invalid_json`: the server could not parse the blob.
    case invalidJSON
    /// 400 `invalid_vault_shape`, with the server's `detail`.
    case invalidVaultShape(detail: String)
    /// 413 `blob_too_large`.
    case blobTooLarge
    /// 429 `rate_limited`; retry after this many seconds.
    case rateLimited(retryAfterSeconds: Int)
    /// 404 `not_found`: nothing stored for this user.
    case notFound
    /// 409 `conflict`: the stored version is another one (nil when nothing is stored).
    case conflict(currentSyncID: String?, currentUpdatedUtc: String?)
    /// 403 `write_proof_required`: the stored version names a write key and this request proved none by it; only a
    /// current member of the vault may replace or erase it.
    case writerRefused
    /// 401 twice: the session could not be renewed, or the OIDC token is refused.
    case unauthorized
    /// Another 4xx the SDK does not expect, with its error code.
    case rejected(status: Int, code: String)
    /// 5xx after the retries ran out.
    case serverUnavailable(status: Int)
    /// No HTTP answer after the retries ran out.
    case transport(String)
}
