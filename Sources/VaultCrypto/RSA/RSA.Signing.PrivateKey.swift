// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension RSA.Signing {
        /// An RSA private key (at least 2048 bits) for SHA-256 signatures.
        ///
        /// A class so that one loaded signing key is shared, not copied, between requests.
        public final class PrivateKey: Sendable {
            let impl: RSAPrivateKeyImpl

            /// The matching public key.
            public let publicKey: PublicKey

            /// Generates a key with public exponent 65537.
            ///
            /// Throws `CryptoError` `.weakParameters` below 2048 bits, `.invalidKeySize` above 16384 bits.
            public init(keySize bits: Int) throws {
                impl = try RSAPrivateKeyImpl(keySize: bits)
                publicKey = PublicKey(impl: impl.publicKey)
            }

            /// Imports a PEM `PRIVATE KEY` (PKCS #8) or `RSA PRIVATE KEY` (PKCS #1).
            ///
            /// Throws `CryptoError` `.invalidEncoding` for malformed or encrypted input, `.weakParameters` below 2048 bits,
            /// `.invalidParameter` for an inconsistent key.
            public init(pemRepresentation: String) throws {
                impl = try RSAPrivateKeyImpl(pemRepresentation: pemRepresentation)
                publicKey = PublicKey(impl: impl.publicKey)
            }

            /// Imports a DER PKCS #8 or PKCS #1 private key.
            ///
            /// Throws as `init(pemRepresentation:)`.
            public init(derRepresentation: some DataProtocol) throws {
                impl = try RSAPrivateKeyImpl(derRepresentation: derRepresentation)
                publicKey = PublicKey(impl: impl.publicKey)
            }

            /// PEM `PRIVATE KEY` (PKCS #8).
            public var pemRepresentation: String { impl.pemRepresentation }
            /// DER PKCS #8.
            public var derRepresentation: Data { impl.derRepresentation }

            /// Signs the SHA-256 hash of `data`.
            ///
            /// Throws `CryptoError` `.libraryFailure` if libcrypto fails.
            public func signature(for data: some DataProtocol, padding: Padding) throws -> Data {
                try DigestContext().signSHA256(data, with: impl.key, configure: padding.configure)
            }
        }
    }
#endif
