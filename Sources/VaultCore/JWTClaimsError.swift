/// Why a token's claims were refused; the code is for logs and tests, never sent to the client.
public struct JWTClaimsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The rule that was broken.
    public enum Code: String, Sendable {
        case malformed
        case expired
        case notYetValid
        case wrongIssuer
        case wrongAudience
        case azpNotAllowed
        case missingSubject
        case wrongScope
    }

    /// The broken rule.
    public let code: Code
    /// A human-readable reason, without token contents beyond claim names.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }
}
