import Foundation
import VaultCore
import VaultCrypto

/// The seed's iOS key-encryption key (`WV-ECDH-SELF+A256GCMKW`): a software P-256 key, or a Secure Enclave one.
///
/// The wrapping key is HKDF-SHA256 (empty salt, info `vault-kek-v1`, 32 bytes) of the key's ECDH with its own
/// public key; the DEK is sealed with AES-256-GCM and stored as IV ‖ ciphertext ‖ tag. On iOS the private key lives
/// in the Secure Enclave behind biometrics, so every wrap needs its holder.
public struct SelfECDHKEK: KeyEncryptionKey {
    /// The private key (a Secure Enclave key on iOS).
    public let privateKey: any P256KeyAgreementKey
    /// As the seed writes it: `base64url(X ‖ Y)` of the public key, 86 characters.
    public let kekID: String
    /// Always `WV-ECDH-SELF+A256GCMKW`.
    public var algorithm: KeyWrapAlgorithm { .selfECDH }
    /// Deriving the wrapping key needs the private key, which on iOS means a biometric prompt.
    public var canWrapWithoutHolder: Bool { false }

    private static let info = Data("vault-kek-v1".utf8)

    /// Uses an existing private key.
    public init(privateKey: any P256KeyAgreementKey) {
        self.privateKey = privateKey
        kekID = Base64URL.encode(privateKey.publicKey.rawRepresentation)
    }

    /// Seals `dek` under the self-ECDH wrapping key, as the seed's step 3 does.
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` if a primitive fails.
    public func wrap(_ dek: SymmetricKey) async throws -> WrappedKey {
        let box = try WrapPrimitives.gcmWrap(dek, with: try wrappingKey())
        return WrappedKey(kekID: kekID, encryptedKey: try WrapPrimitives.combined(box), scheme: .selfECDH, label: nil, created: nil)
    }

    /// Unwraps a `WV-ECDH-SELF+A256GCMKW` entry or a seed-form entry written by the seed's iOS code.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for another scheme, a `dek_cipher` that is not 60 bytes, a
    ///   wrong key or an altered entry.
    public func unwrap(_ entry: WrappedKey) async throws -> SymmetricKey {
        switch entry.scheme {
        case .selfECDH, .seed:
            return try WrapPrimitives.gcmUnwrap(try WrapPrimitives.seedGCMBox(entry.encryptedKey), with: try wrappingKey())
        default:
            throw WrapPrimitives.schemeMismatch(entry, expected: .selfECDH)
        }
    }

    private func wrappingKey() throws(VaultEnvelopeError) -> SymmetricKey {
        let secret: SharedSecret
        do { secret = try privateKey.sharedSecretFromKeyAgreement(with: privateKey.publicKey) } catch let error as VaultEnvelopeError {
            // A platform key reports invalidation (biometry changed, key gone) as a VaultEnvelopeError of its own.
            throw error
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "self-ECDH key agreement failed: \(error)")
        }
        do {
            return try secret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: Data(), sharedInfo: Self.info, outputByteCount: 32)
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "self-ECDH key derivation failed: \(error)")
        }
    }
}
