import Foundation
import VaultCrypto

/// An AES-256 key wrapping with RFC 3394, and how it was obtained; the common core of the `A256KW` providers.
struct A256KWKey: Sendable {
    let key: SymmetricKey
    let kekID: String
    let source: WrappedKey.KeySource

    /// Uses `key` with its key check value as `kek_id`.
    init(key: SymmetricKey, source: WrappedKey.KeySource) {
        self.key = key
        self.source = source
        kekID = KeyIdentifier.symmetric(key)
    }

    /// An entry for `dek`, tagged with this key's source.
    func wrap(_ dek: SymmetricKey) throws(VaultEnvelopeError) -> WrappedKey {
        WrappedKey(
            kekID: kekID, encryptedKey: try WrapPrimitives.aesKeyWrap(dek, with: key), scheme: .a256kw(source),
            label: nil, created: nil)
    }

    /// Unwraps an `A256KW` entry from the same kind of source, or (for stored keys) a seed-form RFC 3394 entry.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for another scheme or source, a wrong key or an altered entry.
    func unwrap(_ entry: WrappedKey) throws(VaultEnvelopeError) -> SymmetricKey {
        switch (entry.scheme, source) {
        case (.a256kw(.stored), .stored), (.seed, .stored), (.a256kw(.recoveryCode), .recoveryCode),
            (.a256kw(.passphrase), .passphrase):
            return try WrapPrimitives.aesKeyUnwrap(entry.encryptedKey, with: key)
        default:
            throw WrapPrimitives.schemeMismatch(entry, expected: .a256kw)
        }
    }
}
