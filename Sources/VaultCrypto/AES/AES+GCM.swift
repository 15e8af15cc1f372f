// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension AES {
        /// AES in Galois/Counter Mode (NIST SP 800-38D) with 96-bit nonces and 128-bit tags.
        public enum GCM {
            /// Encrypts and authenticates `message`, and authenticates `aad` without encrypting it.
            ///
            /// A fresh random nonce is used unless one is given; never reuse a nonce with the same key.
            /// Throws `CryptoError` `.invalidKeySize` unless the key is 128, 192 or 256 bits.
            public static func seal(
                _ message: some DataProtocol,
                using key: SymmetricKey,
                nonce: Nonce? = nil,
                authenticating aad: some DataProtocol
            ) throws -> SealedBox {
                let nonce = nonce ?? Nonce()
                let (ciphertext, tag) = try CipherContext().sealGCM(key: key, nonce: nonce.bytes, plaintext: message, authenticating: aad)
                return SealedBox(validatedNonce: nonce, ciphertext: ciphertext, tag: tag)
            }

            /// Encrypts and authenticates `message` with no additional authenticated data.
            ///
            /// Throws as `seal(_:using:nonce:authenticating:)`.
            public static func seal(_ message: some DataProtocol, using key: SymmetricKey, nonce: Nonce? = nil) throws -> SealedBox {
                try seal(message, using: key, nonce: nonce, authenticating: Data())
            }

            /// Verifies the tag over the ciphertext and `aad`, then returns the plaintext.
            ///
            /// Throws `CryptoError` `.authenticationFailure` if the key, nonce, ciphertext, tag or `aad` differ from sealing;
            /// `.invalidKeySize` for a key that is not 128, 192 or 256 bits.
            public static func open(_ sealedBox: SealedBox, using key: SymmetricKey, authenticating aad: some DataProtocol) throws -> Data {
                try CipherContext().openGCM(
                    key: key, nonce: sealedBox.nonce.bytes, ciphertext: sealedBox.ciphertext, tag: sealedBox.tag, authenticating: aad
                )
            }

            /// Verifies and decrypts a box sealed without additional authenticated data.
            ///
            /// Throws as `open(_:using:authenticating:)`.
            public static func open(_ sealedBox: SealedBox, using key: SymmetricKey) throws -> Data {
                try open(sealedBox, using: key, authenticating: Data())
            }
        }
    }
#endif
