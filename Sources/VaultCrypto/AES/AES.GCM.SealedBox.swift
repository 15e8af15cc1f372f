// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension AES.GCM {
        /// The output of sealing: nonce, ciphertext and authentication tag.
        public struct SealedBox: Sendable, Hashable {
            /// The nonce used to seal.
            public let nonce: Nonce
            /// The encrypted message, as long as the plaintext.
            public let ciphertext: Data
            /// The 16-byte authentication tag.
            public let tag: Data

            init(validatedNonce nonce: Nonce, ciphertext: Data, tag: Data) {
                self.nonce = nonce
                self.ciphertext = ciphertext
                self.tag = tag
            }

            /// Assembles a box from its parts, as received from a peer (e.g. the JWE IV, ciphertext and tag).
            ///
            /// Throws `CryptoError` `.invalidParameter` unless the tag is 16 bytes.
            public init(nonce: Nonce, ciphertext: some DataProtocol, tag: some DataProtocol) throws {
                guard tag.count == Self.tagByteCount else {
                    throw CryptoError(.invalidParameter, "an AES-GCM tag is 16 bytes")
                }
                // Data(_:) of a generic argument copies even a Data; a vault's ciphertext runs to megabytes.
                self.init(validatedNonce: nonce, ciphertext: ciphertext as? Data ?? Data(ciphertext), tag: Data(tag))
            }

            /// Splits `nonce (12) || ciphertext || tag (16)`.
            ///
            /// Throws `CryptoError` `.invalidParameter` if the input is shorter than 28 bytes.
            public init(combined: some DataProtocol) throws {
                let bytes = Data(combined)
                guard bytes.count >= Nonce.byteCount + Self.tagByteCount else {
                    throw CryptoError(.invalidParameter, "a combined AES-GCM box is at least 28 bytes")
                }
                try self.init(
                    nonce: try Nonce(data: bytes.prefix(Nonce.byteCount)),
                    ciphertext: bytes.dropFirst(Nonce.byteCount).dropLast(Self.tagByteCount),
                    tag: bytes.suffix(Self.tagByteCount)
                )
            }

            /// `nonce || ciphertext || tag`; optional as in CryptoKit, where it is nil for a nonce other than 12 bytes
            /// (never here).
            public var combined: Data? { nonce.bytes + ciphertext + tag }
        }
    }
#endif
