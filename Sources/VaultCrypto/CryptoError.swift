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
