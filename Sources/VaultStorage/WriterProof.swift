import Foundation
import VaultCore

/// A request's proof that its sender is a current member of the vault it replaces or erases: a check of a signature
/// against the stored version's write key, supplied by the application (the store holds no cryptography).
///
/// The store runs the check inside the transaction that replaces or erases the version, against the version it read
/// there, so a save racing in between cannot make a proof for an older version pass for a newer one.
public struct WriterProof: Sendable {
    private let verifies: @Sendable (_ writeKey: Data, _ storedSyncID: UTCTimestamp) -> Bool

    /// A proof that `verifies(writeKey, storedSyncID)` checks for the version the request would replace or erase.
    public init(verifies: @escaping @Sendable (_ writeKey: Data, _ storedSyncID: UTCTimestamp) -> Bool) {
        self.verifies = verifies
    }

    /// Whether a request carrying `proof` (nil: none) may replace or erase `current`: always when nothing is stored
    /// or the stored version names no write key (the seed's bare save), else only with a proof that verifies.
    public static func admits(_ proof: WriterProof?, current: StoredVault?) -> Bool {
        guard let current, let writeKey = current.writeKey else { return true }
        return proof?.verifies(writeKey, current.syncID) ?? false
    }

    /// This proof, known to verify for `writeKey` at `storedSyncID` without checking that again: a store that checked
    /// it against the committed version before writing the save's body checks the version it replaces once more in
    /// its transaction, where the same version needs no second P-256 verification.
    func verified(writeKey: Data, storedSyncID: UTCTimestamp) -> WriterProof {
        let verifies = self.verifies
        return WriterProof { key, syncID in (key == writeKey && syncID == storedSyncID) || verifies(key, syncID) }
    }
}
