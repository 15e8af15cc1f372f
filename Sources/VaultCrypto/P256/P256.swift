// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    /// The NIST P-256 curve (secp256r1): ECDSA signing with SHA-256 and ECDH key agreement.
    public enum P256 {}
#endif
