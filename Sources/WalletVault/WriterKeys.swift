import Foundation
import VaultCore
import VaultCrypto
import VaultEnvelope
import VaultWire

/// The write keys a member's save or erasure carries, so that the server takes it from members only
/// (docs/FORMAT.md §11.8): a proof by the stored version's key, and the key the new version names.
public struct WriterKeys: Sendable {
    /// The write key of the stored version being replaced or erased; nil when that version names none.
    public let proving: P256.Signing.PrivateKey?
    /// The write key the new version names; nil for none (an erasure, or a blob from before anchors).
    public let next: P256.Signing.PublicKey?

    /// Keys from the identity of the version being replaced (`basis`) and of the version being written (`next`).
    public init(basis: VaultIdentity?, next: VaultIdentity?) {
        proving = basis?.writeKey
        self.next = next?.writeKey.publicKey
    }

    /// The request headers for `action` over the stored version `storedSyncID` with `body`; no proof without a
    /// stored version to name.
    ///
    /// - Throws: `BackupError.rejected` with `write_proof_failed` if signing fails (a libcrypto failure).
    func headers(action: BackupAction, storedSyncID: String?, body: Data) throws(BackupError) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        let nextKey = next?.rawRepresentation
        if let nextKey { headers.append((WriteProof.writeKeyHeader, Base64URL.encode(nextKey))) }
        guard let proving, let stored = storedSyncID.flatMap(UTCTimestamp.init(rfc3339:)) else { return headers }
        let message = WriteProof.message(
            action: action, storedSyncID: stored.description, bodyDigest: Data(SHA256.hash(data: body)), nextWriteKey: nextKey)
        do {
            headers.append((WriteProof.proofHeader, Base64URL.encode(try proving.signature(for: message).rawRepresentation)))
        } catch {
            throw .rejected(status: 0, code: "write_proof_failed")
        }
        return headers
    }
}
