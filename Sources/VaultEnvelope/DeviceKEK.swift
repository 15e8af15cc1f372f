import Foundation
import VaultCrypto

/// A device's P-256 key pair as key-encryption key (`ECDH-ES+A256KW`), held in software on this platform.
///
/// Its `recipient` is what the device shows another device to be enrolled.
public struct DeviceKEK: KeyEncryptionKey {
    /// The private key; persist it (for example `derRepresentation`) where only this device can read it.
    public let privateKey: P256.KeyAgreement.PrivateKey
    /// The public half, to show a device that enrolls this one.
    public let recipient: PublicKeyRecipient

    /// The RFC 7638 thumbprint of the public key.
    public var kekID: String { recipient.kekID }
    /// Always `ECDH-ES+A256KW`.
    public var algorithm: KeyWrapAlgorithm { .ecdhESA256KW }
    /// Wrapping needs only the public key.
    public var canWrapWithoutHolder: Bool { true }

    /// Uses an existing private key.
    public init(privateKey: P256.KeyAgreement.PrivateKey) {
        self.privateKey = privateKey
        recipient = PublicKeyRecipient(privateKey.publicKey)
    }

    /// Generates a new key pair.
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` if key generation fails.
    public static func generate() throws(VaultEnvelopeError) -> DeviceKEK {
        do {
            return DeviceKEK(privateKey: try P256.KeyAgreement.PrivateKey())
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "cannot generate a P-256 key: \(error)")
        }
    }

    /// Wraps `dek` to this device's own public key.
    ///
    /// - Throws: as `PublicKeyRecipient.wrap(_:)`.
    public func wrap(_ dek: SymmetricKey) async throws -> WrappedKey {
        try await recipient.wrap(dek)
    }

    /// Unwraps an `ECDH-ES+A256KW` entry: ECDH with `epk`, the Concat KDF, then RFC 3394.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for another scheme or an entry for another key, `.malformed`
    ///   if `epk` is not a point on P-256.
    public func unwrap(_ entry: WrappedKey) async throws -> SymmetricKey {
        try Self.unwrap(entry, with: privateKey)
    }

    /// Unwraps an `ECDH-ES+A256KW` entry with any P-256 key-agreement key (a software or a Secure Enclave key).
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for another scheme or an entry for another key, `.malformed`
    ///   if `epk` is not a point on P-256, and what the key throws as a `VaultEnvelopeError` (`.invalidated`).
    public static func unwrap(_ entry: WrappedKey, with privateKey: any P256KeyAgreementKey) throws -> SymmetricKey {
        guard case .ecdhESA256KW(let ephemeral, _) = entry.scheme else {
            throw WrapPrimitives.schemeMismatch(entry, expected: .ecdhESA256KW)
        }
        let secret: SharedSecret
        do {
            secret = try privateKey.sharedSecretFromKeyAgreement(with: try ephemeral.p256Key(path: "epk"))
        } catch let error as VaultEnvelopeError {
            throw error
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "ECDH-ES key agreement failed: \(error)")
        }
        return try WrapPrimitives.aesKeyUnwrap(entry.encryptedKey, with: ConcatKDF.a256kwKey(from: secret))
    }
}
