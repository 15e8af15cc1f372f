// The checks and encodings of RSA public keys that the Apple backends do themselves (libcrypto does them on Linux).
#if canImport(CryptoKit)
import Foundation

/// What an imported RSA public key must be, and its DER encodings (PKCS #1 `RSAPublicKey`, SubjectPublicKeyInfo).
enum RSAPublicKeyRules {
    /// The error of an RSA operation on a platform without an RSA backend.
    static var unavailable: CryptoError {
        CryptoError(.unsupportedAlgorithm, "RSA is not available on this platform")
    }

    /// The modulus and exponent without leading zeros, and the modulus size in bits.
    ///
    /// Throws `CryptoError` `.weakParameters` below `minimumBits`, `.invalidKeySize` above `maximumBits`,
    /// `.invalidPublicKey` for an even modulus or an exponent that is even, below 3 or longer than the modulus.
    static func checked(modulus n: some DataProtocol, exponent e: some DataProtocol, minimumBits: Int, maximumBits: Int)
        throws -> (Data, Data, Int)
    {
        let modulus = Data(n.drop { $0 == 0 })
        let exponent = Data(e.drop { $0 == 0 })
        let bits = modulus.first.map { modulus.count * 8 - $0.leadingZeroBitCount } ?? 0
        guard bits >= minimumBits else { throw CryptoError(.weakParameters, "RSA keys need at least \(minimumBits) bits, got \(bits)") }
        guard bits <= maximumBits else { throw CryptoError(.invalidKeySize, "RSA keys of more than \(maximumBits) bits are refused") }
        guard modulus.last! & 1 == 1 else { throw CryptoError(.invalidPublicKey, "the RSA modulus is even") }
        guard let low = exponent.last, low & 1 == 1, exponent.count < modulus.count, exponent.count > 1 || low >= 3 else {
            throw CryptoError(.invalidPublicKey, "the RSA exponent must be odd, at least 3 and shorter than the modulus")
        }
        return (modulus, exponent, bits)
    }

    /// `RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }` (RFC 8017 A.1.1).
    static func pkcs1(modulus: Data, exponent: Data) -> Data {
        der(0x30, der(0x02, unsignedInteger(modulus)) + der(0x02, unsignedInteger(exponent)))
    }

    /// SubjectPublicKeyInfo with rsaEncryption and NULL parameters (RFC 3279 §2.3.1).
    static func subjectPublicKeyInfo(modulus: Data, exponent: Data) -> Data {
        let rsaEncryption = Data([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00])
        return der(0x30, der(0x30, rsaEncryption) + der(0x03, Data([0x00]) + pkcs1(modulus: modulus, exponent: exponent)))
    }

    /// A positive INTEGER's content: a leading zero byte when the top bit is set.
    private static func unsignedInteger(_ bytes: Data) -> Data {
        (bytes.first ?? 0) & 0x80 != 0 ? Data([0]) + bytes : bytes
    }

    /// One DER element: tag, definite length, content.
    private static func der(_ tag: UInt8, _ content: Data) -> Data {
        var length = Data()
        if content.count < 0x80 {
            length.append(UInt8(content.count))
        } else {
            var count = content.count
            var digits: [UInt8] = []
            while count > 0 {
                digits.insert(UInt8(count & 0xFF), at: 0)
                count >>= 8
            }
            length.append(0x80 | UInt8(digits.count))
            length.append(contentsOf: digits)
        }
        return Data([tag]) + length + content
    }
}
#endif
