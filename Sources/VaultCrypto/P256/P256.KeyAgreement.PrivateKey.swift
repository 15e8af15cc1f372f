// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension P256.KeyAgreement {
        /// A P-256 private key for ECDH.
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
            /// Throws as `init(pemRepresentation:)`.
            public init(derRepresentation: some DataProtocol) throws {
                impl = try P256PrivateKeyImpl(derRepresentation: derRepresentation)
            }

            /// Imports the 32-byte big-endian scalar.
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

            /// Computes the ECDH shared secret (the x-coordinate of the shared point, 32 bytes).
            ///
            /// Throws `CryptoError` `.invalidPublicKey` if libcrypto rejects the peer key, `.libraryFailure` otherwise.
            public func sharedSecretFromKeyAgreement(with publicKeyShare: PublicKey) throws -> SharedSecret {
                SharedSecret(storage: try PKeyContext(key: impl.key).deriveSharedSecret(with: publicKeyShare.impl.key))
            }
        }
    }
#endif
