import Foundation
import VaultCrypto

/// An RSA key pair (2048 bits or more) as key-encryption key (`RSA-OAEP-256`), held in software on this platform.
public struct RSAKEK: KeyEncryptionKey {
    /// The private key; persist it (for example `derRepresentation`) where only its holder can read it.
    public let privateKey: RSA.Encryption.PrivateKey
    /// The public half, which anyone may use to enroll this key.
    public let recipient: PublicKeyRecipient

    /// The RFC 7638 thumbprint of the public key.
    public var kekID: String { recipient.kekID }
    /// Always `RSA-OAEP-256`.
    public var algorithm: KeyWrapAlgorithm { .rsaOAEP256 }
    /// Wrapping needs only the public key.
    public var canWrapWithoutHolder: Bool { true }

    /// Uses an existing private key.
    public init(privateKey: RSA.Encryption.PrivateKey) {
        self.privateKey = privateKey
        recipient = PublicKeyRecipient(privateKey.publicKey)
    }

    /// Wraps `dek` to this key's own public key.
    ///
    /// - Throws: as `PublicKeyRecipient.wrap(_:)`.
    public func wrap(_ dek: SymmetricKey) async throws -> WrappedKey {
        try await recipient.wrap(dek)
    }

    /// Unwraps an `RSA-OAEP-256` entry (OAEP-SHA256, MGF1-SHA256), or a seed-form entry holding an OAEP-SHA256
    /// ciphertext: MGF1-SHA256 first, then MGF1-SHA1, which Java's `RSA/ECB/OAEPWithSHA-256AndMGF1Padding` uses
    /// unless given an `OAEPParameterSpec`, so what the seed's Android code may have written opens (FORMAT.md §4.2).
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for another scheme, another key or an altered ciphertext.
    public func unwrap(_ entry: WrappedKey) async throws -> SymmetricKey {
        let masks: [RSA.Encryption.MaskGenerationHash]
        switch entry.scheme {
        case .rsaOAEP256: masks = [.sha256]
        case .seed: masks = [.sha256, .sha1]
        default: throw WrapPrimitives.schemeMismatch(entry, expected: .rsaOAEP256)
        }
        var failure: (any Error)?
        for mask in masks {
            do {
                var plaintext = try privateKey.decrypt(entry.encryptedKey, mgf1: mask)
                defer { plaintext.resetBytes(in: plaintext.startIndex..<plaintext.endIndex) }
                return try WrapPrimitives.checkedPayload(SymmetricKey(data: plaintext))
            } catch let error as VaultEnvelopeError {
                throw error
            } catch {
                failure = error
            }
        }
        throw VaultEnvelopeError.unwrapping(CryptoError(classifying: failure!), "RSA-OAEP-256")
    }
}
