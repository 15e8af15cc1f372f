import Foundation
import VaultEnvelope

/// Which of a vault's entries are recovery codes and which passphrases, read from the last synced blob's `kdf`.
///
/// `revoke` needs this to ask for exactly the secrets whose entries must survive the DEK rotation.
struct RecoveryEntries: Sendable {
    /// The kind of a person-held entry.
    enum Kind: String, Sendable {
        case recoveryCode = "recovery code"
        case passphrase
    }

    /// Kinds by `kek_id`; device entries are absent.
    let kinds: [String: Kind]
    /// The parsed envelope, for passphrase unlocking.
    let envelope: VaultEnvelope?

    /// Reads `blob`; an unreadable blob has no known recovery entries.
    init(blob: Data?) {
        envelope = blob.flatMap { try? VaultEnvelope(parsing: $0) }
        var kinds: [String: Kind] = [:]
        for entry in envelope?.entries ?? [] {
            switch entry.scheme {
            case .a256kw(.recoveryCode): kinds[entry.kekID] = .recoveryCode
            case .a256kw(.passphrase): kinds[entry.kekID] = .passphrase
            default: break
            }
        }
        self.kinds = kinds
    }

    /// The `kek_id`s of one kind.
    func ids(_ kind: Kind) -> [String] { kinds.filter { $0.value == kind }.map(\.key).sorted() }
}
