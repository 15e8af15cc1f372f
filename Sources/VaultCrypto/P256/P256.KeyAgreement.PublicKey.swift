// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension P256.KeyAgreement {
        /// A P-256 public key for ECDH, validated on import.
        public struct PublicKey: Sendable {
            let impl: P256PublicKeyImpl

            init(impl: P256PublicKeyImpl) {
                self.impl = impl
            }

            /// Imports an uncompressed point `04 || X || Y` and checks it is on the curve and not the point at infinity.
            ///
            /// Throws `CryptoError` `.invalidPublicKey` for another length, a compressed point, or an invalid point.
            public init(x963Representation: some ContiguousBytes) throws {
                impl = try x963Representation.withUnsafeBytes { try P256PublicKeyImpl(x963Representation: $0) }
            }

            /// Imports `X || Y` (64 bytes), as in a JWK `epk`.
            ///
            /// Throws `CryptoError` `.invalidPublicKey` if the length is wrong or the point is not on P-256.
            public init(rawRepresentation: some DataProtocol) throws {
                impl = try P256PublicKeyImpl(rawRepresentation: rawRepresentation)
            }

            /// Imports a PEM `PUBLIC KEY` (SubjectPublicKeyInfo).
            ///
            /// Throws `CryptoError` `.invalidEncoding` for malformed input, `.invalidPublicKey` for another curve or a bad point.
            public init(pemRepresentation: String) throws {
                impl = try P256PublicKeyImpl(pemRepresentation: pemRepresentation)
            }

            /// Imports a DER SubjectPublicKeyInfo.
            ///
            /// Throws `CryptoError` `.invalidEncoding` for malformed input, `.invalidPublicKey` for another curve or a bad point.
            public init(derRepresentation: some DataProtocol) throws {
                impl = try P256PublicKeyImpl(derRepresentation: derRepresentation)
            }

            /// The uncompressed point `04 || X || Y`, 65 bytes.
            public var x963Representation: Data { impl.x963Representation }
            /// `X || Y`, 64 bytes.
            public var rawRepresentation: Data { impl.rawRepresentation }
            /// PEM `PUBLIC KEY` (SubjectPublicKeyInfo).
            public var pemRepresentation: String { impl.pemRepresentation }
            /// DER SubjectPublicKeyInfo.
            public var derRepresentation: Data { impl.derRepresentation }
        }
    }
#endif
