import Foundation
import VaultCrypto

/// The seed's Android key-encryption key (`A256GCMKW`): an AES-256 key that seals the DEK with AES-GCM,
/// with a software key on this platform.
///
/// On Android the key is a biometric-gated Keystore key, so every wrap needs its holder. Entries this key writes
/// keep the IV and tag in the `iv` and `tag` members as JWA does; seed-form entries hold
/// `wrapIv ‖ doFinal(dek)` (IV ‖ ciphertext ‖ tag) in `dek_cipher`, and both are read.
public struct AESGCMKEK: KeyEncryptionKey {
    private let key: SymmetricKey
    /// The `kek_id`: the key check value unless the app chose its own (an Android Keystore key cannot be exported
    /// to compute one, so the app may use any stable, non-secret name).
    public let kekID: String
    /// Always `A256GCMKW`.
    public var algorithm: KeyWrapAlgorithm { .a256gcmkw }
    /// Every use of a biometric-gated Keystore key needs a prompt.
    public var canWrapWithoutHolder: Bool { false }

    /// Uses `key` (256 bits) with the given `kek_id`, or its key check value.
    public init(key: SymmetricKey, kekID: String? = nil) {
        self.key = key
        self.kekID = kekID ?? KeyIdentifier.symmetric(key)
    }

    /// Seals `dek` with a fresh random IV.
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` if the key is not a valid AES key.
    public func wrap(_ dek: SymmetricKey) async throws -> WrappedKey {
        let box = try WrapPrimitives.gcmWrap(dek, with: key)
        return WrappedKey(
            kekID: kekID, encryptedKey: box.ciphertext,
            scheme: .a256gcmkw(iv: box.nonce.withUnsafeBytes { Data($0) }, tag: box.tag), label: nil, created: nil
        )
    }

    /// Unwraps an `A256GCMKW` entry or a seed-form entry laid out as IV ‖ ciphertext ‖ tag.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for another scheme, a wrong key or an altered entry.
    public func unwrap(_ entry: WrappedKey) async throws -> SymmetricKey {
        let box: AES.GCM.SealedBox
        switch entry.scheme {
        case .a256gcmkw(let iv, let tag):
            do {
                box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: iv), ciphertext: entry.encryptedKey, tag: tag)
            } catch {
                throw VaultEnvelopeError(.malformed, "A256GCMKW entry has an IV or tag of the wrong size")
            }
        case .seed:
            box = try WrapPrimitives.seedGCMBox(entry.encryptedKey)
        default:
            throw WrapPrimitives.schemeMismatch(entry, expected: .a256gcmkw)
        }
        return try WrapPrimitives.gcmUnwrap(box, with: key)
    }
}
