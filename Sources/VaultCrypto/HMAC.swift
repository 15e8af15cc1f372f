// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    /// A hash-based message authentication code (RFC 2104), spelled `HMAC<SHA256>` as in CryptoKit.
    ///
    /// A value: a copy goes on independently. Copies share one keyed OpenSSL context until one is updated, so that
    /// many messages MACed under one key pay for the keying once.
    /// `@unchecked Sendable`: the shared context is only changed through a reference no other copy holds.
    public struct HMAC<H: HashFunction>: @unchecked Sendable {
        private var context: MACContext
    }

    extension HMAC where H == SHA256 {
        /// Starts a code keyed with `key`.
        ///
        /// Never throws; traps only if libcrypto cannot allocate memory.
        public init(key: SymmetricKey) {
            context = LibCrypto.mustSucceed { try key.withUnsafeBytes { try MACContext(hmacSHA256Key: $0) } }
        }

        /// Adds `data` to the message.
        ///
        /// Never throws; traps only if libcrypto cannot allocate memory.
        public mutating func update(data: some DataProtocol) {
            LibCrypto.mustSucceed {
                if !isKnownUniquelyReferenced(&context) { context = try context.copy() }
                // `Data` (what callers hand) through the specialization for it, not the generic path.
                if let data = data as? Data { try context.update(data) } else { try context.update(data) }
            }
        }

        /// Returns the 32-byte code of the message.
        ///
        /// Never throws; traps only if libcrypto cannot allocate memory.
        public consuming func finalize() -> Data {
            LibCrypto.mustSucceed {
                if !isKnownUniquelyReferenced(&context) { context = try context.copy() }
                return try context.finish()
            }
        }

        /// Returns the 32-byte HMAC-SHA256 of `data` under `key`.
        ///
        /// Never throws; traps only if libcrypto cannot allocate memory.
        public static func authenticationCode(for data: some DataProtocol, using key: SymmetricKey) -> Data {
            var code = HMAC(key: key)
            code.update(data: data)
            return code.finalize()
        }

        /// Checks a full-length (32-byte) HMAC-SHA256 code in constant time; truncated codes are refused.
        ///
        /// Never throws.
        public static func isValidAuthenticationCode(
            _ code: some DataProtocol,
            authenticating data: some DataProtocol,
            using key: SymmetricKey
        ) -> Bool {
            let expected = authenticationCode(for: data, using: key)
            return expected.withUnsafeBytes { expectedBytes in
                LibCrypto.withContiguousBytes(code) { LibCrypto.constantTimeEquals(expectedBytes, $0) }
            }
        }
    }
#endif
