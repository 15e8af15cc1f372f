// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    extension P256 {
        /// ECDSA over P-256 with SHA-256 (JOSE ES256).
        public enum Signing {}
    }
#endif
