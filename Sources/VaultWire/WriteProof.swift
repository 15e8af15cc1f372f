import Foundation

/// The writer proof of a save or an erasure: what a current member signs so that the server takes the request
/// from members only, though it reads nothing of the vault (docs/FORMAT.md §11.8, docs/openapi.yaml).
///
/// Each anchored version is stored with the P-256 `write key` its writer named, derived from that epoch's vault
/// secret; a save or erasure of a user whose stored version names one must carry an ES256 signature by it over
/// `message(action:storedSyncID:bodyDigest:nextWriteKey:)`. A revoked device never learns the next epoch's secret,
/// so once a revocation is stored it can neither overwrite nor erase the vault, whatever login it still holds.
public enum WriteProof {
    /// The request header naming the write key of the version a save stores: base64url of the P-256 point `X ‖ Y`.
    public static let writeKeyHeader = "WalletVault-Write-Key"
    /// The request header carrying the proof: base64url of the raw ES256 signature `r ‖ s` (64 bytes).
    public static let proofHeader = "WalletVault-Write-Proof"
    /// The length of a write key as the header carries it: `X ‖ Y`.
    public static let writeKeyByteCount = 64
    /// The length of a raw P-256 ECDSA signature.
    public static let signatureByteCount = 64

    private static let domain = Data("WalletVault-v1 write proof".utf8) + [0]

    /// The bytes a proof signs: `"WalletVault-v1 write proof" ‖ 0x00 ‖ action ‖ 0x00 ‖ stored sync_id ‖ 0x00 ‖
    /// SHA-256(body) ‖ next write key`.
    ///
    /// `storedSyncID` is the version the request replaces or erases, as its `ETag` spells it (so a proof is good for
    /// one stored version only and cannot be replayed after it changed); `bodyDigest` the SHA-256 of the request body
    /// (of no bytes for an erasure); `nextWriteKey` the 64 bytes of the `WalletVault-Write-Key` header, or nothing.
    public static func message(action: BackupAction, storedSyncID: String, bodyDigest: Data, nextWriteKey: Data?) -> Data {
        domain + Data(action.rawValue.utf8) + [0] + Data(storedSyncID.utf8) + [0] + bodyDigest + (nextWriteKey ?? Data())
    }
}
