// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension P256.Signing {
        /// A P-256 private key for ECDSA-SHA256 signing.
        public struct PrivateKey: Sendable {
            let impl: P256PrivateKeyImpl

            /// Generates a new random key.
            ///
            /// Throws `CryptoError` `.libraryFailure` if libcrypto cannot generate a key.
            public init() throws {
                impl = try P256PrivateKeyImpl()
            }

            /// Imports a PEM `PRIVATE KEY` (PKCS #8) or `EC PRIVATE KEY` (SEC 1).
            ///
            /// Throws `CryptoError` `.invalidEncoding` for malformed input, `.invalidParameter` for another curve or an
            /// inconsistent key.
            public init(pemRepresentation: String) throws {
                impl = try P256PrivateKeyImpl(pemRepresentation: pemRepresentation)
            }

            /// Imports a DER PKCS #8 or SEC 1 private key.
            ///
            /// Throws `CryptoError` `.invalidEncoding` for malformed input, `.invalidParameter` for another curve or an
            /// inconsistent key.
            public init(derRepresentation: some DataProtocol) throws {
                impl = try P256PrivateKeyImpl(derRepresentation: derRepresentation)
            }

            /// Imports the 32-byte big-endian scalar, as in a JWK `d`.
            ///
            /// Throws `CryptoError` `.invalidKeySize` for another length, `.invalidParameter` for 0 or a scalar ≥ the order.
            public init(rawRepresentation: some DataProtocol) throws {
                impl = try P256PrivateKeyImpl(rawRepresentation: rawRepresentation)
            }

            /// PEM `PRIVATE KEY` (PKCS #8).
            public var pemRepresentation: String { impl.pemRepresentation }
            /// DER PKCS #8.
            public var derRepresentation: Data { impl.derRepresentation }
            /// The 32-byte big-endian scalar.
            public var rawRepresentation: Data { impl.rawRepresentation }

            /// The matching public key.
            public var publicKey: PublicKey { PublicKey(impl: impl.publicKey) }

            /// Signs the SHA-256 hash of `data` with ECDSA (randomised `k`).
            ///
            /// Throws `CryptoError` `.libraryFailure` if libcrypto fails.
            public func signature(for data: some DataProtocol) throws -> ECDSASignature {
                let der = try DigestContext().signSHA256(data, with: impl.key)
                return try ECDSASignature(derRepresentation: der)
            }
        }
    }
#endif
