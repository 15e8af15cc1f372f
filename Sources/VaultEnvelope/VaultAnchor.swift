import Foundation

/// What a reader pins for a vault: its id, the newest secret epoch it accepted, and that epoch's fingerprint
/// `F(e)` (FORMAT.md §11.1–§11.2).
///
/// Not secret: getting from `fingerprint` back to the vault secret needs a SHA-256 preimage. It lets a reader
/// check that a blob's writer held the secret without the reader storing the secret itself.
public struct VaultAnchor: Sendable, Hashable {
    /// `vault_id`, as the blob spells it (base64url of 16 bytes).
    public let vaultID: String
    /// The epoch of the secret `fingerprint` was computed from.
    public let epoch: UInt64
    /// `F(epoch)`: 32 bytes.
    public let fingerprint: Data

    /// Creates an anchor from its stored parts.
    public init(vaultID: String, epoch: UInt64, fingerprint: Data) {
        self.vaultID = vaultID
        self.epoch = epoch
        self.fingerprint = fingerprint
    }

    /// The fingerprint's first 8 bytes as four hex groups, for people to compare between two devices (§11.6).
    public var displayFingerprint: String { Self.grouped(fingerprint) }

    /// The first 8 bytes of `digest` as 16 lower-case hex digits in four groups of four, as people compare them.
    public static func grouped(_ digest: Data) -> String {
        let hex = digest.prefix(8).map { String(format: "%02x", $0) }.joined()
        return stride(from: 0, to: hex.count, by: 4).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return String(hex[start..<hex.index(start, offsetBy: 4)])
        }.joined(separator: " ")
    }
}
