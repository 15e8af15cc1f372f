// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    extension RSA.Signing {
        /// An RSA public key (at least 2048 bits) for verifying SHA-256 signatures.
        ///
        /// A class so that the JOSE layer can share one key between threads without copying.
        public final class PublicKey: Sendable {
            let impl: RSAPublicKeyImpl
            /// Verification contexts prepared once per padding and reused (PreparedVerifierPool).
            private let pkcs1Verifiers = PreparedVerifierPool(padding: .pkcs1v1_5)
            private let pssVerifiers = PreparedVerifierPool(padding: .pss)

            init(impl: RSAPublicKeyImpl) {
                self.impl = impl
            }

            /// Imports a key from its big-endian modulus and exponent (JWK `n` and `e`).
            ///
            /// Throws `CryptoError` `.weakParameters` below 2048 bits, `.invalidKeySize` above 16384 bits,
            /// `.invalidPublicKey` for an even modulus or an unusable exponent.
            public init(modulus n: some DataProtocol, exponent e: some DataProtocol) throws {
                impl = try RSAPublicKeyImpl(modulus: n, exponent: e)
            }

            /// Imports a PEM `PUBLIC KEY` (SubjectPublicKeyInfo) or `RSA PUBLIC KEY` (PKCS #1).
            ///
            /// Throws `CryptoError` `.invalidEncoding` for malformed input, otherwise as `init(modulus:exponent:)`.
            public init(pemRepresentation: String) throws {
                impl = try RSAPublicKeyImpl(pemRepresentation: pemRepresentation)
            }

            /// Imports a DER SubjectPublicKeyInfo or PKCS #1 `RSAPublicKey`.
            ///
            /// Throws `CryptoError` `.invalidEncoding` for malformed input, otherwise as `init(modulus:exponent:)`.
            public init(derRepresentation: some DataProtocol) throws {
                impl = try RSAPublicKeyImpl(derRepresentation: derRepresentation)
            }

            /// The modulus, unsigned big-endian without leading zeros.
            public var modulus: Data { impl.modulus }
            /// The public exponent, unsigned big-endian without leading zeros.
            public var exponent: Data { impl.exponent }
            /// The modulus size in bits.
            public var keySizeInBits: Int { impl.keySizeInBits }
            /// PEM `PUBLIC KEY` (SubjectPublicKeyInfo).
            public var pemRepresentation: String { impl.pemRepresentation }
            /// DER SubjectPublicKeyInfo.
            public var derRepresentation: Data { impl.derRepresentation }

            /// Verifies a signature over the SHA-256 hash of `data`.
            ///
            /// Never throws: a wrong, malformed or wrongly padded signature is `false`.
            public func isValidSignature(_ signature: some DataProtocol, for data: some DataProtocol, padding: Padding) -> Bool {
                let verifiers =
                    switch padding {
                    case .pkcs1v1_5: pkcs1Verifiers
                    case .pss: pssVerifiers
                    }
                // JOSE hands `Data`: verified through the pool's specialization for it, not the generic path, whose
                // witness-table calls and metadata lookups showed in the D1 profile.
                if let signature = signature as? Data, let data = data as? Data {
                    return verifiers.verifySHA256(signature, for: data, with: impl.key)
                }
                return verifiers.verifySHA256(signature, for: data, with: impl.key)
            }
        }
    }
#endif
