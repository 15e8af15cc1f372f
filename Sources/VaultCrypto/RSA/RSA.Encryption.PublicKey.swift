import Foundation

extension RSA.Encryption {
    /// An RSA public key (at least 2048 bits) for OAEP-SHA256 encryption.
    public final class PublicKey: Sendable {
        let impl: RSAPublicKeyImpl

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

        /// Encrypts `message` (at most key size − 66 bytes, 190 for 2048-bit keys) with a random OAEP seed.
        ///
        /// Throws `CryptoError` `.invalidParameter` if the message is too long.
        public func encrypt(_ message: some DataProtocol) throws -> Data {
            try encrypt(message, label: Data())
        }

        /// Encrypts with an OAEP label, which JOSE never sets; the conformance vectors do.
        func encrypt(_ message: some DataProtocol, label: some DataProtocol) throws -> Data {
            try impl.encrypt(message, label: label, mgf1: .sha256)
        }

        /// Encrypts with another MGF1 hash, as Java's default OAEP-SHA256 does: only for tests of readers of such
        /// ciphertexts; nothing in this package writes one.
        func encrypt(_ message: some DataProtocol, mgf1: MaskGenerationHash) throws -> Data {
            try impl.encrypt(message, label: Data(), mgf1: mgf1)
        }
    }
}
