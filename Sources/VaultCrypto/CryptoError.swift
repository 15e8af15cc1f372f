/// An error from a cryptographic operation: a stable code for tests and callers, a reason for humans.
///
/// The reason never contains key material, plaintext or ciphertext.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, stable across releases.
    public enum Code: String, Sendable {
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

    /// The stable code.
    public let code: Code
    /// A human-readable reason without secrets.
    public let reason: String

    /// Creates an error with a code and a reason.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The code and the reason; safe to log.
    public var description: String { "\(code.rawValue): \(reason)" }
}
