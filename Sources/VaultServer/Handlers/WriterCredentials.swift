import Foundation
import VaultCore
import VaultCrypto
import VaultHTTP
import VaultStorage
import VaultWire

/// A save's or an erasure's writer headers, read and checked: the write key the new version names and the proof
/// that the sender may replace the stored version (`WriteProof`).
struct WriterCredentials {
    /// The new version's write key (`X ‖ Y`), nil when the save names none.
    let nextWriteKey: Data?
    /// The check of the request's proof against a stored version's write key, nil when the request carries none.
    let proof: WriterProof?

    /// Reads the headers of `request`, a request for `action`.
    ///
    /// A proof that is no 64-byte signature stays a proof that verifies nothing, so a missing and a malformed proof
    /// get the same 403 when one is needed, and are ignored when none is.
    /// - Throws: `APIError` 400 `invalid_write_key` for a `WalletVault-Write-Key` that is not a P-256 point.
    init(_ request: HTTPRequest, action: BackupAction) throws(APIError) {
        if let text = request.header(WriteProof.writeKeyHeader) {
            guard let key = Base64URL.decode(text), key.count == WriteProof.writeKeyByteCount,
                (try? P256.Signing.PublicKey(rawRepresentation: key)) != nil
            else {
                throw APIError(
                    .invalidWriteKey, "\(WriteProof.writeKeyHeader) must be base64url of a P-256 public key's X ‖ Y (64 bytes)")
            }
            nextWriteKey = key
        } else {
            nextWriteKey = nil
        }
        guard let text = request.header(WriteProof.proofHeader) else {
            proof = nil
            return
        }
        let signature = Base64URL.decode(text).flatMap { try? P256.Signing.ECDSASignature(rawRepresentation: $0) }
        let bodyDigest = Data(SHA256.hash(data: request.body))
        let nextWriteKey = nextWriteKey
        proof = WriterProof { writeKey, storedSyncID in
            guard let signature, let key = try? P256.Signing.PublicKey(rawRepresentation: writeKey) else { return false }
            let message = WriteProof.message(
                action: action, storedSyncID: storedSyncID.description, bodyDigest: bodyDigest, nextWriteKey: nextWriteKey)
            return key.isValidSignature(signature, for: message)
        }
    }

    /// 403 `write_proof_required`: one answer whether the proof was missing or wrong.
    static let refused = APIError(
        .writeProofRequired,
        "only a current member of this vault may replace or erase it: the stored version names a write key and this "
            + "request carries no valid \(WriteProof.proofHeader) by it")
}
