/// An error as a stable code and a reason for people, in the style of swift-asn1: callers and
/// tests compare codes; each module names its own codes.
///
/// The reason never contains key material, tokens, plaintext or ciphertext.
public struct CodedError<ErrorCode: RawRepresentable & Hashable & Sendable>: Error, Hashable, Sendable, CustomStringConvertible
where ErrorCode.RawValue == String {
    /// The module's codes, spelled `CryptoError.Code` and so on at the use site.
    public typealias Code = ErrorCode

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
