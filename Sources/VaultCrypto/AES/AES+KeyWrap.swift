// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension AES {
        /// AES key wrapping: RFC 3394 (JOSE A128KW/A192KW/A256KW) and the padded RFC 5649 variant.
        public enum KeyWrap {
            /// Wraps a key of at least 16 bytes and a multiple of 8 bytes (RFC 3394, NIST SP 800-38F KW).
            ///
            /// Throws `CryptoError` `.invalidKeySize` unless the KEK is 128, 192 or 256 bits, `.invalidParameter` for a key
            /// of another length (8-byte keys included, which SP 800-38F does not define).
            public static func wrap(_ keyToWrap: SymmetricKey, using kek: SymmetricKey) throws -> Data {
                guard keyToWrap.byteCount >= 16, keyToWrap.byteCount % 8 == 0 else {
                    throw CryptoError(.invalidParameter, "RFC 3394 wraps keys of at least 16 bytes in multiples of 8")
                }
                return try wrapped(keyToWrap, mode: .keyWrap, kek: kek)
            }

            /// Unwraps an RFC 3394 wrapped key and checks its integrity value.
            ///
            /// Throws `CryptoError` `.authenticationFailure` if the KEK is wrong or the data was altered, `.invalidParameter`
            /// for a length that no wrapped key can have, `.invalidKeySize` for a bad KEK size.
            public static func unwrap(_ wrappedKey: some DataProtocol, using kek: SymmetricKey) throws -> SymmetricKey {
                guard wrappedKey.count >= 24, wrappedKey.count % 8 == 0 else {
                    throw CryptoError(.invalidParameter, "an RFC 3394 wrapped key is at least 24 bytes in multiples of 8")
                }
                return SymmetricKey(storage: try CipherContext().wrap(wrappedKey, mode: .keyWrap, key: kek, encrypt: false))
            }

            /// Wraps key material of any non-zero length (RFC 5649, NIST SP 800-38F KWP).
            ///
            /// Throws `CryptoError` `.invalidParameter` for empty input, `.invalidKeySize` for a bad KEK size.
            public static func wrapWithPadding(_ keyToWrap: SymmetricKey, using kek: SymmetricKey) throws -> Data {
                guard keyToWrap.byteCount > 0 else {
                    throw CryptoError(.invalidParameter, "RFC 5649 cannot wrap empty input")
                }
                return try wrapped(keyToWrap, mode: .keyWrapWithPadding, kek: kek)
            }

            /// Unwraps RFC 5649 wrapped key material, checking the integrity value, length indicator and zero padding.
            ///
            /// Throws `CryptoError` `.authenticationFailure` if any check fails, `.invalidParameter` for an impossible length,
            /// `.invalidKeySize` for a bad KEK size.
            public static func unwrapWithPadding(_ wrappedKey: some DataProtocol, using kek: SymmetricKey) throws -> SymmetricKey {
                guard wrappedKey.count >= 16, wrappedKey.count % 8 == 0 else {
                    throw CryptoError(.invalidParameter, "an RFC 5649 wrapped key is at least 16 bytes in multiples of 8")
                }
                return SymmetricKey(storage: try CipherContext().wrap(wrappedKey, mode: .keyWrapWithPadding, key: kek, encrypt: false))
            }

            /// Wrapped output is not secret, so it leaves `SecureBytes` as plain `Data`.
            private static func wrapped(_ key: SymmetricKey, mode: CipherContext.Mode, kek: SymmetricKey) throws -> Data {
                let output = try key.withUnsafeBytes { try CipherContext().wrap($0, mode: mode, key: kek, encrypt: true) }
                return output.withUnsafeBytes { Data($0) }
            }
        }
    }
#endif
