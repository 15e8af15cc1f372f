import Foundation
import VaultCrypto

/// The two symmetric wraps every provider ends in, with their failures mapped to envelope errors once.
enum WrapPrimitives {
    /// RFC 3394 wrap of a 32-byte DEK (40 bytes) or a 56-byte bound payload (64 bytes, `WrapBinding`).
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` if the primitive refuses the keys.
    static func aesKeyWrap(_ dek: SymmetricKey, with key: SymmetricKey) throws(VaultEnvelopeError) -> Data {
        do {
            return try AES.KeyWrap.wrap(dek, using: key)
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "A256KW wrap failed: \(error)")
        }
    }

    /// RFC 3394 unwrap, checking the integrity value and that the result is a DEK or a bound payload.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for a wrong key or an altered entry.
    static func aesKeyUnwrap(_ wrapped: Data, with key: SymmetricKey) throws(VaultEnvelopeError) -> SymmetricKey {
        let unwrapped: SymmetricKey
        do {
            unwrapped = try AES.KeyWrap.unwrap(wrapped, using: key)
        } catch {
            throw VaultEnvelopeError.unwrapping(CryptoError(classifying: error), "A256KW")
        }
        return try checkedPayload(unwrapped)
    }

    /// AES-256-GCM over the DEK bytes with a fresh random IV and no additional data, as both seed schemes do.
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` if the primitive refuses the key.
    static func gcmWrap(_ dek: SymmetricKey, with key: SymmetricKey) throws(VaultEnvelopeError) -> AES.GCM.SealedBox {
        do {
            return try dek.withUnsafeBytes { try AES.GCM.seal($0, using: key) }
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "AES-GCM wrap failed: \(error)")
        }
    }

    /// Opens an AES-256-GCM wrapped DEK.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for a wrong key, an altered entry or a result of another length
    ///   than a DEK's or a bound payload's.
    static func gcmUnwrap(_ box: AES.GCM.SealedBox, with key: SymmetricKey) throws(VaultEnvelopeError) -> SymmetricKey {
        var opened: Data
        do {
            opened = try AES.GCM.open(box, using: key)
        } catch {
            // The key is 256 bits and the box well formed, so a refusal is the tag's: a wrong key or an altered entry.
            // (CryptoKit says authenticationFailure; swift-crypto's BoringSSL backend an underlying error code.)
            throw VaultEnvelopeError(.unwrapFailed, "AES-GCM key wrap: the key does not unwrap this entry")
        }
        defer { opened.resetBytes(in: opened.startIndex..<opened.endIndex) }
        return try checkedPayload(SymmetricKey(data: opened))
    }

    /// The seed's `IV ‖ ciphertext ‖ tag` layout of a box sealed here.
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` for a box without a 12-byte nonce (CryptoKit's `combined` is
    ///   nil then; every box sealed here has one).
    static func combined(_ box: AES.GCM.SealedBox) throws(VaultEnvelopeError) -> Data {
        guard let combined = box.combined else { throw VaultEnvelopeError(.cryptoFailure, "an AES-GCM box without a 12-byte nonce") }
        return combined
    }

    /// Splits the seed's `IV ‖ ciphertext ‖ tag` layout.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` if `dek_cipher` is neither 60 nor 84 bytes (a DEK or a bound
    ///   payload), so it cannot be this scheme.
    static func seedGCMBox(_ combined: Data) throws(VaultEnvelopeError) -> AES.GCM.SealedBox {
        let overhead = AES.GCM.Nonce.byteCount + AES.GCM.SealedBox.tagByteCount
        guard combined.count == overhead + 32 || combined.count == overhead + WrapBinding.payloadByteCount,
            let box = try? AES.GCM.SealedBox(combined: combined)
        else {
            throw VaultEnvelopeError(.unwrapFailed, "dek_cipher is not a 60- or 84-byte AES-GCM IV ‖ ciphertext ‖ tag")
        }
        return box
    }

    /// Accepts only a 256-bit DEK or a 56-byte bound payload (`WrapBinding`), so a wrapped key of another size cannot
    /// downgrade the vault cipher.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for another size.
    static func checkedPayload(_ key: SymmetricKey) throws(VaultEnvelopeError) -> SymmetricKey {
        guard key.bitCount == 256 || key.bitCount == WrapBinding.payloadByteCount * 8 else {
            throw VaultEnvelopeError(.unwrapFailed, "the unwrapped key is neither a 256-bit DEK nor a bound payload")
        }
        return key
    }

    /// The error for an entry in a scheme other than the key's own.
    static func schemeMismatch(_ entry: WrappedKey, expected: KeyWrapAlgorithm) -> VaultEnvelopeError {
        VaultEnvelopeError(
            .unwrapFailed, "entry is \(entry.algorithm?.rawValue ?? "seed-form"), this key unwraps \(expected.rawValue)")
    }
}
