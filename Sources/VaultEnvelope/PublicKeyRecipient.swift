import Foundation
import VaultCrypto

/// The public half of a device's P-256 or RSA key-encryption key: anyone shown it can wrap a DEK to it,
/// only the holder of the private key can unwrap.
///
/// This is how one device enrolls another: the new device shows its public key, a device that has the vault
/// open wraps the DEK to it. Rotation rebuilds recipients from the `jwk` member of their entries.
public struct PublicKeyRecipient: KeyWrapping {
    /// The recipient's public key.
    public let publicKey: PublicJWK
    /// The key's RFC 7638 thumbprint.
    public let kekID: String
    /// `ECDH-ES+A256KW` for P-256 keys, `RSA-OAEP-256` for RSA keys.
    public let algorithm: KeyWrapAlgorithm
    /// Wrapping needs only the public key.
    public var canWrapWithoutHolder: Bool { true }

    /// A recipient for `ECDH-ES+A256KW`.
    public init(_ key: P256.KeyAgreement.PublicKey) {
        self.init(publicKey: PublicJWK(key), algorithm: .ecdhESA256KW)
    }

    /// A recipient for `RSA-OAEP-256`.
    public init(_ key: RSA.Encryption.PublicKey) {
        self.init(publicKey: PublicJWK(key), algorithm: .rsaOAEP256)
    }

    /// The recipient an entry was wrapped for, when the entry names its public key; nil for symmetric schemes, and
    /// for an entry whose `jwk` is not the key its `kek_id` names or is not a key to wrap to (off the curve, RSA
    /// below 2048 bits), so a rotation never re-wraps a DEK to a key nobody enrolled.
    init?(recipientOf entry: WrappedKey) {
        switch entry.scheme {
        case .ecdhESA256KW(_, let recipient): self.init(publicKey: recipient, algorithm: .ecdhESA256KW)
        case .rsaOAEP256(let recipient): self.init(publicKey: recipient, algorithm: .rsaOAEP256)
        default: return nil
        }
        guard kekID == entry.kekID, publicKey.isAcceptable else { return nil }
    }

    private init(publicKey: PublicJWK, algorithm: KeyWrapAlgorithm) {
        self.publicKey = publicKey
        self.algorithm = algorithm
        kekID = publicKey.thumbprint
    }

    /// Wraps `dek` to the public key: a fresh ephemeral key per wrap for ECDH-ES, a fresh OAEP seed for RSA.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if the stored key is not a valid key, `.cryptoFailure` if a
    ///   primitive fails.
    public func wrap(_ dek: SymmetricKey) async throws -> WrappedKey {
        let scheme: WrappedKey.Scheme
        let encryptedKey: Data
        switch algorithm {
        case .rsaOAEP256:
            let key = try publicKey.rsaKey(path: "jwk")
            do {
                encryptedKey = try dek.withUnsafeBytes { try key.encrypt($0) }
            } catch {
                throw VaultEnvelopeError(.cryptoFailure, "RSA-OAEP-256 wrap failed: \(error)")
            }
            scheme = .rsaOAEP256(recipient: publicKey)
        default:
            let recipient = try publicKey.p256Key(path: "jwk")
            let ephemeral: P256.KeyAgreement.PrivateKey
            let secret: SharedSecret
            do {
                ephemeral = try P256.KeyAgreement.PrivateKey()
                secret = try ephemeral.sharedSecretFromKeyAgreement(with: recipient)
            } catch {
                throw VaultEnvelopeError(.cryptoFailure, "ECDH-ES key agreement failed: \(error)")
            }
            encryptedKey = try WrapPrimitives.aesKeyWrap(dek, with: ConcatKDF.a256kwKey(from: secret))
            scheme = .ecdhESA256KW(ephemeral: PublicJWK(ephemeral.publicKey), recipient: publicKey)
        }
        return WrappedKey(kekID: kekID, encryptedKey: encryptedKey, scheme: scheme, label: nil, created: nil)
    }
}
