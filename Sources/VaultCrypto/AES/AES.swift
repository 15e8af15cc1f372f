// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    /// The AES block cipher: GCM authenticated encryption and RFC 3394 / RFC 5649 key wrapping.
    public enum AES {}
#endif
