// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension AES.GCM {
        /// A 96-bit AES-GCM nonce.
        public struct Nonce: Sendable, Hashable, ContiguousBytes {
            let bytes: Data

            /// Generates a random nonce.
            ///
            /// Never throws; traps only if the system cannot provide random bytes.
            public init() {
                bytes = SecureRandom.bytes(count: Self.byteCount)
            }

            /// Uses the given 12 bytes as the nonce.
            ///
            /// Throws `CryptoError` `.invalidParameter` for any other length.
            public init(data: some DataProtocol) throws {
                guard data.count == Self.byteCount else {
                    throw CryptoError(.invalidParameter, "an AES-GCM nonce is 12 bytes")
                }
                bytes = Data(data)
            }

            /// Accepts any non-empty IV length GCM defines, for conformance vectors only; the public API stays at 96 bits.
            init(anyLengthData data: some DataProtocol) throws {
                guard !data.isEmpty else {
                    throw CryptoError(.invalidParameter, "an AES-GCM nonce cannot be empty")
                }
                bytes = Data(data)
            }

            /// Calls `body` with the nonce bytes.
            ///
            /// Rethrows what `body` throws.
            public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
                try bytes.withUnsafeBytes(body)
            }
        }
    }
#endif
