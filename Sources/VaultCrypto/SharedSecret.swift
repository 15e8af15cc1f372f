// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// The raw output of a key agreement; feed it to a KDF rather than using it as a key.
    public struct SharedSecret: Sendable, CustomStringConvertible {
        let storage: SecureBytes

        /// Calls `body` with the secret bytes (for tests); they must not escape the closure.
        ///
        /// Rethrows what `body` throws.
        public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try storage.withUnsafeBytes(body)
        }

        /// Derives a symmetric key with HKDF-SHA256, using the secret as input key material.
        ///
        /// Throws `CryptoError` `.invalidParameter` unless `outputByteCount` is in `1...8160`.
        public func hkdfDerivedSymmetricKey(
            using hashFunction: SHA256.Type,
            salt: some DataProtocol,
            sharedInfo: some DataProtocol,
            outputByteCount: Int
        ) throws -> SymmetricKey {
            try HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(storage: storage), salt: salt, info: sharedInfo, outputByteCount: outputByteCount
            )
        }

        /// The length only; the bytes never appear in logs.
        public var description: String { "SharedSecret(\(storage.count) bytes)" }
    }
#endif
