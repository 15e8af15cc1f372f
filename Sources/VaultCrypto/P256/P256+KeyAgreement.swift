// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    extension P256 {
        /// Elliptic-curve Diffie-Hellman on P-256 (JOSE ECDH-ES).
        public enum KeyAgreement {}
    }
#endif
