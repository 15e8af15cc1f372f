// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto

    extension RSA {
        /// RSA signatures with SHA-256: RSASSA-PKCS1-v1_5 (JOSE RS256) and RSASSA-PSS (JOSE PS256).
        public enum Signing {
            /// The signature scheme.
            public enum Padding: Sendable {
                /// RSASSA-PKCS1-v1_5 (RS256).
                case pkcs1v1_5
                /// RSASSA-PSS with MGF1-SHA256 and a 32-byte salt, as RFC 7518 requires for PS256.
                case pss

                /// Applies the scheme to a signing or verification `EVP_PKEY_CTX`.
                func configure(_ context: OpaquePointer) throws {
                    switch self {
                    case .pkcs1v1_5:
                        try LibCrypto.check(
                            EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING), .libraryFailure, "cannot select PKCS #1 v1.5")
                    case .pss:
                        try LibCrypto.check(
                            EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING), .libraryFailure, "cannot select PSS")
                        try LibCrypto.check(
                            EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha256()), .libraryFailure, "cannot select MGF1-SHA256")
                        // Fixed at the digest length on both sides: verification refuses any other salt length.
                        try LibCrypto.check(
                            EVP_PKEY_CTX_set_rsa_pss_saltlen(context, Int32(SHA256.byteCount)), .libraryFailure,
                            "cannot set the PSS salt length"
                        )
                    }
                }
            }
        }
    }
#endif
