// RSA-OAEP-256 where CryptoKit stands in for libcrypto (which does all of this itself on Linux): the key checks and
// DER encodings here, the encryption in `RSAOAEPBackend` (Security on Apple platforms, none elsewhere).
#if canImport(CryptoKit)
    import Foundation

    /// An RSA public key for OAEP-SHA256 encryption: what a device needs to wrap the DEK for an RSA entry another device
    /// enrolled, imported from the entry's JWK `n` and `e`.
    struct RSAPublicKeyImpl: Sendable {
        static let minimumBits = 2048
        static let maximumBits = 16384

        /// Unsigned big-endian, no leading zeros.
        let modulus: Data
        /// Unsigned big-endian, no leading zeros.
        let exponent: Data
        let keySizeInBits: Int

        init(modulus n: some DataProtocol, exponent e: some DataProtocol) throws {
            (modulus, exponent, keySizeInBits) = try RSAPublicKeyRules.checked(
                modulus: n, exponent: e, minimumBits: Self.minimumBits, maximumBits: Self.maximumBits)
            try RSAOAEPBackend.check(publicKeyPKCS1: RSAPublicKeyRules.pkcs1(modulus: modulus, exponent: exponent))
        }

        init(pemRepresentation: String) throws {
            throw CryptoError(.unsupportedAlgorithm, "RSA PEM import is not offered on this platform; import n and e")
        }

        init(derRepresentation: some DataProtocol) throws {
            throw CryptoError(.unsupportedAlgorithm, "RSA DER import is not offered on this platform; import n and e")
        }

        var derRepresentation: Data { RSAPublicKeyRules.subjectPublicKeyInfo(modulus: modulus, exponent: exponent) }

        var pemRepresentation: String {
            "-----BEGIN PUBLIC KEY-----\n"
                + derRepresentation.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
                + "\n-----END PUBLIC KEY-----\n"
        }

        /// OAEP-SHA256 with MGF1-SHA256 and an empty label (Security takes no label; JOSE never sets one, and its
        /// `rsaEncryptionOAEPSHA256` has no MGF1-SHA1 variant).
        func encrypt(_ message: some DataProtocol, label: some DataProtocol, mgf1: RSA.Encryption.MaskGenerationHash) throws -> Data {
            guard label.isEmpty else { throw CryptoError(.unsupportedAlgorithm, "OAEP labels are not offered on this platform") }
            guard mgf1 == .sha256 else { throw CryptoError(.unsupportedAlgorithm, "OAEP with MGF1-SHA1 is not offered on this platform") }
            return try RSAOAEPBackend.encrypt(Data(message), publicKeyPKCS1: RSAPublicKeyRules.pkcs1(modulus: modulus, exponent: exponent))
        }
    }

    /// RSA private keys are not offered here: a device on these platforms holds a Secure Enclave or Keychain key.
    struct RSAPrivateKeyImpl: Sendable {
        let publicKey: RSAPublicKeyImpl

        init(keySize bits: Int) throws { throw Self.unavailable }
        init(pemRepresentation: String) throws { throw Self.unavailable }
        init(derRepresentation: some DataProtocol) throws { throw Self.unavailable }

        var pemRepresentation: String { "" }
        var derRepresentation: Data { Data() }

        func decrypt(_ ciphertext: some DataProtocol, label: some DataProtocol, mgf1: RSA.Encryption.MaskGenerationHash) throws -> Data {
            throw Self.unavailable
        }

        private static var unavailable: CryptoError {
            CryptoError(.unsupportedAlgorithm, "RSA private keys are not offered on this platform; use a Secure Enclave or Keychain key")
        }
    }

    /// What an imported RSA public key must be, and its DER encodings (PKCS #1 `RSAPublicKey`, SubjectPublicKeyInfo).
    enum RSAPublicKeyRules {
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
