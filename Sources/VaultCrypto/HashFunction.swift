// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    /// A cryptographic hash function usable as the parameter of `HMAC` and `HKDF`.
    public protocol HashFunction: Sendable {
        /// The digest length in bytes.
        static var byteCount: Int { get }

        /// Hashes `data` in one shot.
        ///
        /// Never throws.
        static func hash<D: DataProtocol>(data: D) -> Data
    }
#endif
