import Foundation

extension RSA.Encryption {
    /// An RSA private key (at least 2048 bits) for OAEP-SHA256 decryption.
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

        /// Decrypts an OAEP-SHA256 ciphertext.
        ///
        /// Throws `CryptoError` `.authenticationFailure` for any malformed, altered or foreign ciphertext (one error
        /// for every cause, so the result cannot serve as a padding oracle).
        public func decrypt(_ ciphertext: some DataProtocol) throws -> Data {
            try decrypt(ciphertext, label: Data())
        }

        /// Decrypts an OAEP-SHA256 ciphertext whose MGF1 uses `mgf1`: `.sha1` reads what Java's
        /// `OAEPWithSHA-256AndMGF1Padding` writes by default. libcrypto only: on Apple platforms RSA private keys are
        /// not offered at all (and Security's OAEP-SHA256 has no MGF1-SHA1 variant).
        ///
        /// Throws as `decrypt(_:)`.
        public func decrypt(_ ciphertext: some DataProtocol, mgf1: MaskGenerationHash) throws -> Data {
            try impl.decrypt(ciphertext, label: Data(), mgf1: mgf1)
        }

        /// Decrypts with an OAEP label, which JOSE never sets; the conformance vectors do.
        func decrypt(_ ciphertext: some DataProtocol, label: some DataProtocol) throws -> Data {
            try impl.decrypt(ciphertext, label: label, mgf1: .sha256)
        }
    }
}
