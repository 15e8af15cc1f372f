// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension P256.Signing {
        /// An ECDSA P-256 signature, held as the fixed-width `r || s` that JOSE ES256 uses.
        public struct ECDSASignature: Sendable, Hashable {
            /// `r || s`, 64 bytes.
            public let rawRepresentation: Data

            /// Creates a signature from `r || s`.
            ///
            /// Throws `CryptoError` `.invalidEncoding` unless the input is exactly 64 bytes.
            public init(rawRepresentation: some DataProtocol) throws {
                guard rawRepresentation.count == 2 * P256PublicKeyImpl.coordinateByteCount else {
                    throw CryptoError(.invalidEncoding, "a raw P-256 signature is 64 bytes")
                }
                self.rawRepresentation = Data(rawRepresentation)
            }

            /// Creates a signature from a DER `ECDSA-Sig-Value` (as X.509 and OpenSSL use).
            ///
            /// Throws `CryptoError` `.invalidEncoding` for non-canonical DER, trailing bytes, or values wider than 32 bytes.
            public init(derRepresentation: some DataProtocol) throws {
                rawRepresentation = try ECDSASig(derRepresentation: derRepresentation)
                    .rawRepresentation(coordinateByteCount: P256PublicKeyImpl.coordinateByteCount)
            }

            /// The DER `ECDSA-Sig-Value` encoding.
            public var derRepresentation: Data {
                let width = P256PublicKeyImpl.coordinateByteCount
                return LibCrypto.mustSucceed {
                    try ECDSASig(r: rawRepresentation.prefix(width), s: rawRepresentation.suffix(width)).derRepresentation()
                }
            }
        }
    }
#endif
