// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// The public-key logic shared by `RSA.Signing.PublicKey` and `RSA.Encryption.PublicKey`.
    struct RSAPublicKeyImpl: Sendable {
        /// Smaller moduli are factorable in practice or close to it (NIST SP 800-131A).
        static let minimumBits = 2048
        /// Larger moduli only make verification a denial-of-service vector.
        static let maximumBits = 16384

        let key: EVPKey

        /// Imports a key from its big-endian modulus and public exponent (as in a JWK `n` and `e`).
        init(modulus: some DataProtocol, exponent: some DataProtocol) throws {
            let builder = try ParamBuilder()
            try builder.push(.rsaModulus, bigEndianInteger: modulus)
            try builder.push(.rsaExponent, bigEndianInteger: exponent)
            try self.init(checking: try EVPKey.fromParameters("RSA", part: .publicKey, builder: builder))
        }

        init(pemRepresentation: String) throws {
            try self.init(checking: try EVPKey.decode(Data(pemRepresentation.utf8), format: .pem, part: .publicKey, keyType: "RSA"))
        }

        init(derRepresentation: some DataProtocol) throws {
            try self.init(checking: try EVPKey.decode(derRepresentation, format: .der, part: .publicKey, keyType: "RSA"))
        }

        /// Wraps the public half of a private key that was already validated.
        init(publicPartOf privateKey: EVPKey) throws {
            key = try privateKey.publicKeyOnly(keyType: "RSA")
        }

        private init(checking key: EVPKey) throws {
            try Self.checkSize(key.bitCount)
            // Rejects an even modulus, an even or unit exponent, and a prime modulus.
            try key.validate(.publicKey)
            self.key = key
        }

        static func checkSize(_ bits: Int) throws {
            guard bits >= minimumBits else {
                throw CryptoError(.weakParameters, "RSA keys must be at least \(minimumBits) bits")
            }
            guard bits <= maximumBits else {
                throw CryptoError(.invalidKeySize, "RSA keys larger than \(maximumBits) bits are not accepted")
            }
        }

        var modulus: Data { LibCrypto.mustSucceed { try key.integerParameter(.rsaModulus) } }
        var exponent: Data { LibCrypto.mustSucceed { try key.integerParameter(.rsaExponent) } }
        var keySizeInBits: Int { key.bitCount }

        var pemRepresentation: String {
            LibCrypto.mustSucceed { String(decoding: try key.encode(.publicKey, format: .pem), as: UTF8.self) }
        }

        var derRepresentation: Data {
            LibCrypto.mustSucceed { try key.encode(.publicKey, format: .der) }
        }
    }
#endif
