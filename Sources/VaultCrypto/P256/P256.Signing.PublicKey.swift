// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension P256.Signing {
        /// A P-256 public key for verifying ECDSA-SHA256 signatures.
        public struct PublicKey: Sendable {
            let impl: P256PublicKeyImpl

            init(impl: P256PublicKeyImpl) {
                self.impl = impl
            }

            /// Imports an uncompressed point `04 || X || Y`.
            ///
            /// Throws `CryptoError` `.invalidPublicKey` if the encoding is not 65 bytes or the point is not on P-256.
            public init(x963Representation: some ContiguousBytes) throws {
                impl = try x963Representation.withUnsafeBytes { try P256PublicKeyImpl(x963Representation: $0) }
            }

            /// Imports `X || Y` (64 bytes), as in a JWK.
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

            /// Verifies an ECDSA-SHA256 signature over `data`.
            ///
            /// Never throws: an invalid signature (including out-of-range `r` or `s`) is `false`.
            public func isValidSignature(_ signature: ECDSASignature, for data: some DataProtocol) -> Bool {
                guard let context = try? DigestContext() else { return false }
                return context.verifySHA256(signature.derRepresentation, for: data, with: impl.key)
            }
        }
    }
#endif
