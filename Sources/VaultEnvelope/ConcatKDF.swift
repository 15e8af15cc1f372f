import Foundation
import VaultCrypto

/// The JOSE Concat KDF inputs (RFC 7518 §4.6.2) for `ECDH-ES+A256KW`; OpenSSL's SSKDF does the hashing.
enum ConcatKDF {
    /// The 256-bit A256KW key from a P-256 shared secret, with empty `apu` and `apv`.
    ///
    /// OtherInfo is `len‖"ECDH-ES+A256KW" ‖ len‖apu ‖ len‖apv ‖ 00000100` (keydatalen 256 bits, big-endian).
    static func a256kwKey(from sharedSecret: SharedSecret) throws(VaultEnvelopeError) -> SymmetricKey {
        let algorithmID = Array(KeyWrapAlgorithm.ecdhESA256KW.rawValue.utf8)
        var otherInfo: [UInt8] = []
        CanonicalEncoding.appendBigEndian(UInt64(algorithmID.count), byteCount: 4, into: &otherInfo)
        otherInfo += algorithmID
        otherInfo += [0, 0, 0, 0, 0, 0, 0, 0]  // PartyUInfo and PartyVInfo: empty
        CanonicalEncoding.appendBigEndian(256, byteCount: 4, into: &otherInfo)  // SuppPubInfo: keydatalen in bits
        do {
            return try sharedSecret.concatDerivedSymmetricKey(using: SHA256.self, otherInfo: otherInfo, outputByteCount: 32)
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "the Concat KDF failed")
        }
    }
}
