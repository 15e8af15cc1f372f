import Foundation
import VaultCrypto

/// The JOSE Concat KDF (NIST SP 800-56A §5.8.1 as profiled by RFC 7518 §4.6.2) for `ECDH-ES+A256KW`.
enum ConcatKDF {
    private static let algorithmID = Array(KeyWrapAlgorithm.ecdhESA256KW.rawValue.utf8)

    /// The 256-bit A256KW key: `SHA-256(00000001 ‖ Z ‖ len‖"ECDH-ES+A256KW" ‖ len‖apu ‖ len‖apv ‖ 00000100)`
    /// with empty `apu` and `apv`, one round because SHA-256 yields exactly the 256 bits needed.
    static func a256kwKey(from sharedSecret: SharedSecret) -> SymmetricKey {
        var input: [UInt8] = [0, 0, 0, 1]
        sharedSecret.withUnsafeBytes { input.append(contentsOf: $0) }
        CanonicalEncoding.appendBigEndian(UInt64(algorithmID.count), byteCount: 4, into: &input)
        input += algorithmID
        input += [0, 0, 0, 0, 0, 0, 0, 0]  // PartyUInfo and PartyVInfo: empty
        CanonicalEncoding.appendBigEndian(256, byteCount: 4, into: &input)  // SuppPubInfo: keydatalen in bits
        var digest = SHA256.hash(data: input)
        for index in input.indices { input[index] = 0 }
        defer { digest.resetBytes(in: digest.startIndex..<digest.endIndex) }
        return SymmetricKey(data: digest)
    }
}
