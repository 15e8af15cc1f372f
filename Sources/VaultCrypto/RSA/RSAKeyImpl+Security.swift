// Security backend for RSA-OAEP-256 on Apple platforms. Not compiled on this project's Linux CI: written against
// Apple's documentation of SecKeyCreateWithData, SecKeyIsAlgorithmSupported, SecKeyCreateEncryptedData and
// SecKeyAlgorithm.rsaEncryptionOAEPSHA256 (OAEP with SHA-256 and MGF1-SHA256, JOSE's RSA-OAEP-256).
#if canImport(CryptoKit) && canImport(Security)
import Foundation
import Security

/// An RSA public key for OAEP-SHA256 encryption on Apple platforms: what an Apple device needs to wrap the DEK for an
/// RSA entry another device enrolled (imported from the entry's JWK `n` and `e`).
struct RSAPublicKeyImpl: Sendable {
    static let minimumBits = 2048
    static let maximumBits = 16384

    /// Unsigned big-endian, no leading zeros.
    let modulus: Data
    /// Unsigned big-endian, no leading zeros.
    let exponent: Data
    let keySizeInBits: Int

    init(modulus n: some DataProtocol, exponent e: some DataProtocol) throws {
        let (modulus, exponent, bits) = try RSAPublicKeyRules.checked(modulus: n, exponent: e,
                                                                        minimumBits: Self.minimumBits, maximumBits: Self.maximumBits)
        self.modulus = modulus
        self.exponent = exponent
        keySizeInBits = bits
        _ = try secKey()
    }

    init(pemRepresentation: String) throws {
        throw CryptoError(.unsupportedAlgorithm, "RSA PEM import is not offered on Apple platforms; import n and e")
    }

    init(derRepresentation: some DataProtocol) throws {
        throw CryptoError(.unsupportedAlgorithm, "RSA DER import is not offered on Apple platforms; import n and e")
    }

    var derRepresentation: Data { RSAPublicKeyRules.subjectPublicKeyInfo(modulus: modulus, exponent: exponent) }

    var pemRepresentation: String {
        "-----BEGIN PUBLIC KEY-----\n" + derRepresentation.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END PUBLIC KEY-----\n"
    }

    /// OAEP-SHA256 with MGF1-SHA256 and an empty label (Security takes no label; JOSE never sets one).
    func encrypt(_ message: some DataProtocol, label: some DataProtocol) throws -> Data {
        guard label.isEmpty else { throw CryptoError(.unsupportedAlgorithm, "OAEP labels are not offered on Apple platforms") }
        let key = try secKey()
        guard SecKeyIsAlgorithmSupported(key, .encrypt, .rsaEncryptionOAEPSHA256) else {
            throw CryptoError(.unsupportedAlgorithm, "this key cannot do RSA-OAEP-SHA256")
        }
        var error: Unmanaged<CFError>?
        guard let ciphertext = SecKeyCreateEncryptedData(key, .rsaEncryptionOAEPSHA256, Data(message) as CFData, &error) else {
            throw CryptoError(.invalidParameter, "RSA-OAEP encryption refused the message (too long for the key?)")
        }
        return ciphertext as Data
    }

    /// A Security key from the PKCS #1 `RSAPublicKey` encoding, which is what SecKeyCreateWithData takes for RSA.
    private func secKey() throws -> SecKey {
        let attributes: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeyClass as String: kSecAttrKeyClassPublic]
        var error: Unmanaged<CFError>?
        guard let key = SecKeyCreateWithData(RSAPublicKeyRules.pkcs1(modulus: modulus, exponent: exponent) as CFData,
                                             attributes as CFDictionary, &error)
        else { throw CryptoError(.invalidPublicKey, "Security refused the RSA public key") }
        return key
    }
}

/// RSA private keys are not offered on Apple platforms: a device there holds a Secure Enclave or Keychain key.
struct RSAPrivateKeyImpl: Sendable {
    let publicKey: RSAPublicKeyImpl

    init(keySize bits: Int) throws { throw Self.unavailable }
    init(pemRepresentation: String) throws { throw Self.unavailable }
    init(derRepresentation: some DataProtocol) throws { throw Self.unavailable }

    var pemRepresentation: String { "" }
    var derRepresentation: Data { Data() }

    func decrypt(_ ciphertext: some DataProtocol, label: some DataProtocol) throws -> Data { throw Self.unavailable }

    private static var unavailable: CryptoError {
        CryptoError(.unsupportedAlgorithm, "RSA private keys are not offered on Apple platforms; use a Secure Enclave or Keychain key")
    }
}
#endif
