// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto

    /// A NUL-terminated name with static storage, for libcrypto calls that keep the pointer instead of copying.
    ///
    /// `OSSL_PARAM`, `OSSL_PARAM_BLD` and the encoder/decoder contexts store `const char *` names and read them later.
    /// Swift passes a `String` as a temporary pointer, so every name handed to libcrypto is a static literal instead.
    struct OpenSSLName: Sendable, ExpressibleByStringLiteral {
        typealias StringLiteralType = StaticString

        private let literal: StaticString

        init(stringLiteral literal: StaticString) {
            self.literal = literal
        }

        /// Spells an `OSSL_*_PARAM_*` macro, which Swift imports as `String`; debug builds check the spelling.
        private init(_ literal: StaticString, matching macro: String) {
            assert(literal.description == macro, "OpenSSL name \(literal) does not match \(macro)")
            self.literal = literal
        }

        /// The NUL-terminated name, valid for the life of the process.
        var cString: UnsafePointer<CChar> {
            UnsafeRawPointer(literal.utf8Start).assumingMemoryBound(to: CChar.self)
        }

        static let groupName = OpenSSLName("group", matching: OSSL_PKEY_PARAM_GROUP_NAME)
        static let publicKey = OpenSSLName("pub", matching: OSSL_PKEY_PARAM_PUB_KEY)
        static let privateKey = OpenSSLName("priv", matching: OSSL_PKEY_PARAM_PRIV_KEY)
        static let rsaModulus = OpenSSLName("n", matching: OSSL_PKEY_PARAM_RSA_N)
        static let rsaExponent = OpenSSLName("e", matching: OSSL_PKEY_PARAM_RSA_E)
        static let kdfDigest = OpenSSLName("digest", matching: OSSL_KDF_PARAM_DIGEST)
        static let kdfKey = OpenSSLName("key", matching: OSSL_KDF_PARAM_KEY)
        static let kdfSalt = OpenSSLName("salt", matching: OSSL_KDF_PARAM_SALT)
        static let kdfInfo = OpenSSLName("info", matching: OSSL_KDF_PARAM_INFO)
        static let macDigest = OpenSSLName("digest", matching: OSSL_MAC_PARAM_DIGEST)
        static let oaepLabel = OpenSSLName("oaep-label", matching: OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL)
    }
#endif
