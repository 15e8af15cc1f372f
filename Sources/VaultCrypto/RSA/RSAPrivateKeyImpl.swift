// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// The private-key logic shared by `RSA.Signing.PrivateKey` and `RSA.Encryption.PrivateKey`.
    struct RSAPrivateKeyImpl: Sendable {
        let key: EVPKey
        let publicKey: RSAPublicKeyImpl

        /// Generates a key with public exponent 65537.
        init(keySize bits: Int) throws {
            try RSAPublicKeyImpl.checkSize(bits)
            try self.init(
                validated: try EVPKey.generate("RSA") { context in
                    try LibCrypto.check(
                        EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)), .invalidKeySize, "unsupported RSA key size"
                    )
                })
        }

        init(pemRepresentation: String) throws {
            try self.init(checking: try EVPKey.decode(Data(pemRepresentation.utf8), format: .pem, part: .privateKey, keyType: "RSA"))
        }

        init(derRepresentation: some DataProtocol) throws {
            try self.init(checking: try EVPKey.decode(derRepresentation, format: .der, part: .privateKey, keyType: "RSA"))
        }

        private init(checking key: EVPKey) throws {
            try RSAPublicKeyImpl.checkSize(key.bitCount)
            // Catches corrupted or inconsistent CRT parameters, which would otherwise leak the key on a faulty signature.
            try key.validate(.privateKey)
            try self.init(validated: key)
        }

        private init(validated key: EVPKey) throws {
            self.key = key
            publicKey = try RSAPublicKeyImpl(publicPartOf: key)
        }

        var pemRepresentation: String {
            LibCrypto.mustSucceed { String(decoding: try key.encode(.privateKey, format: .pem), as: UTF8.self) }
        }

        var derRepresentation: Data {
            LibCrypto.mustSucceed { try key.encode(.privateKey, format: .der) }
        }
    }
#endif
