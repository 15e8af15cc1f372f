// Where neither libcrypto nor Security exists (CryptoKit's API without Apple's Security, as in the scratch check of
// the CryptoKit branch against swift-crypto): RSA entries are unusable, every other key kind works.
#if canImport(CryptoKit) && !canImport(Security)
    import Foundation

    /// No RSA-OAEP-256 here: keys are still checked, encryption throws.
    enum RSAOAEPBackend {
        /// Accepts what the shared checks accepted.
        static func check(publicKeyPKCS1 der: Data) throws {}

        /// Throws `CryptoError` `.unsupportedAlgorithm`.
        static func encrypt(_ message: Data, publicKeyPKCS1 der: Data) throws -> Data {
            throw CryptoError(.unsupportedAlgorithm, "RSA is not available on this platform")
        }
    }
#endif
