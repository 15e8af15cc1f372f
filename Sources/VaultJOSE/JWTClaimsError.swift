import VaultCore

/// Why a token's claims were refused; the code is for logs and tests, never sent to the client.
public typealias JWTClaimsError = CodedError<JWTClaimsErrorCode>

/// The codes of `JWTClaimsError`, stable across releases.
public enum JWTClaimsErrorCode: String, Sendable {
    case malformed
    case expired
    case notYetValid
    case wrongIssuer
    case wrongAudience
    case azpNotAllowed
    case missingSubject
    case wrongScope
}
