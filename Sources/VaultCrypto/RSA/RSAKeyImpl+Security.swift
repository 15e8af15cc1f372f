// Security backend for RSA-OAEP-256 on Apple platforms. Not compiled on this project's Linux CI: written against
// Apple's documentation of SecKeyCreateWithData, SecKeyIsAlgorithmSupported, SecKeyCreateEncryptedData and
// SecKeyAlgorithm.rsaEncryptionOAEPSHA256 (OAEP with SHA-256 and MGF1-SHA256, JOSE's RSA-OAEP-256).
#if canImport(CryptoKit) && canImport(Security)
    import Foundation
    import Security

    /// RSA-OAEP-256 encryption through Security's `SecKey`.
    enum RSAOAEPBackend {
        /// Checks that Security takes the key.
        ///
        /// Throws `CryptoError` `.invalidPublicKey` when it does not.
        static func check(publicKeyPKCS1 der: Data) throws {
            _ = try secKey(der)
        }

        /// Encrypts `message` with OAEP-SHA256 and MGF1-SHA256.
        ///
        /// Throws `CryptoError` `.unsupportedAlgorithm` for a key Security cannot use so, `.invalidParameter` for a message
        /// too long for the key.
        static func encrypt(_ message: Data, publicKeyPKCS1 der: Data) throws -> Data {
            let key = try secKey(der)
            guard SecKeyIsAlgorithmSupported(key, .encrypt, .rsaEncryptionOAEPSHA256) else {
                throw CryptoError(.unsupportedAlgorithm, "this key cannot do RSA-OAEP-SHA256")
            }
            var error: Unmanaged<CFError>?
            guard let ciphertext = SecKeyCreateEncryptedData(key, .rsaEncryptionOAEPSHA256, message as CFData, &error) else {
                throw CryptoError(.invalidParameter, "RSA-OAEP encryption refused the message (too long for the key?)")
            }
            return ciphertext as Data
        }

        /// A Security key from the PKCS #1 `RSAPublicKey` encoding, which is what SecKeyCreateWithData takes for RSA.
        private static func secKey(_ der: Data) throws -> SecKey {
            let attributes: [String: Any] = [
                kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeyClass as String: kSecAttrKeyClassPublic,
            ]
            var error: Unmanaged<CFError>?
            guard let key = SecKeyCreateWithData(der as CFData, attributes as CFDictionary, &error) else {
                throw CryptoError(.invalidPublicKey, "Security refused the RSA public key")
            }
            return key
        }
    }
#endif
