import VaultCore

/// An error from a cryptographic operation: a stable code for tests and callers, a reason for humans.
///
/// The reason never contains key material, plaintext or ciphertext.
public typealias CryptoError = CodedError<CryptoErrorCode>

/// The codes of `CryptoError`, stable across releases.
public enum CryptoErrorCode: String, Sendable {
    case invalidKeySize
    case invalidParameter
    case authenticationFailure
    case invalidPublicKey
    case invalidSignature
    case invalidEncoding
    case unsupportedAlgorithm
    case weakParameters
    case libraryFailure
}

extension CodedError where ErrorCode == CryptoErrorCode {
    /// The error a primitive threw, as a `CryptoError`: itself, or where CryptoKit exists, its `CryptoKitError`
    /// under the code that means the same, so callers branch on one set of codes on every platform.
    public init(classifying error: any Error) {
        if let error = error as? CryptoError {
            self = error
            return
        }
        #if canImport(CryptoKit)
            if let error = error as? CryptoKitError {
                switch error {
                case .authenticationFailure, .unwrapFailure: self.init(.authenticationFailure, "authentication failed")
                case .incorrectKeySize: self.init(.invalidKeySize, "wrong key size")
                case .incorrectParameterSize, .invalidParameter: self.init(.invalidParameter, "invalid parameter")
                default: self.init(.libraryFailure, "CryptoKit: \(error)")
                }
                return
            }
        #endif
        self.init(.libraryFailure, "\(type(of: error))")
    }
}
