// Where neither libcrypto nor Security exists (CryptoKit's API without Apple's Security, as in the scratch check of
// the CryptoKit branch against swift-crypto): RSA entries are skipped as unusable, every other key kind works.
#if canImport(CryptoKit) && !canImport(Security)
import Foundation

/// An RSA public key that cannot encrypt here: imports are checked, encryption throws `.unsupportedAlgorithm`.
struct RSAPublicKeyImpl: Sendable {
    static let minimumBits = 2048
    static let maximumBits = 16384

    let modulus: Data
    let exponent: Data
    let keySizeInBits: Int

    init(modulus n: some DataProtocol, exponent e: some DataProtocol) throws {
        (modulus, exponent, keySizeInBits) = try RSAPublicKeyRules.checked(
            modulus: n, exponent: e, minimumBits: Self.minimumBits, maximumBits: Self.maximumBits)
    }

    init(pemRepresentation: String) throws { throw RSAPublicKeyRules.unavailable }
    init(derRepresentation: some DataProtocol) throws { throw RSAPublicKeyRules.unavailable }

    var derRepresentation: Data { RSAPublicKeyRules.subjectPublicKeyInfo(modulus: modulus, exponent: exponent) }
    var pemRepresentation: String { "" }

    func encrypt(_ message: some DataProtocol, label: some DataProtocol) throws -> Data { throw RSAPublicKeyRules.unavailable }
}

/// An RSA private key that cannot exist here.
struct RSAPrivateKeyImpl: Sendable {
    let publicKey: RSAPublicKeyImpl

    init(keySize bits: Int) throws { throw RSAPublicKeyRules.unavailable }
    init(pemRepresentation: String) throws { throw RSAPublicKeyRules.unavailable }
    init(derRepresentation: some DataProtocol) throws { throw RSAPublicKeyRules.unavailable }

    var pemRepresentation: String { "" }
    var derRepresentation: Data { Data() }

    func decrypt(_ ciphertext: some DataProtocol, label: some DataProtocol) throws -> Data { throw RSAPublicKeyRules.unavailable }
}
#endif
