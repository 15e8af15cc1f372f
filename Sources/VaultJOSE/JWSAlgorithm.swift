/// The JWS algorithms this project signs and verifies (RFC 7518 §3); every other name is refused.
public enum JWSAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// RSASSA-PSS with SHA-256 and MGF1-SHA-256.
    case ps256 = "PS256"
    /// ECDSA on P-256 with SHA-256.
    case es256 = "ES256"
    /// HMAC with SHA-256.
    case hs256 = "HS256"

    /// The asymmetric algorithms an OIDC issuer's keys may use.
    public static let asymmetric: Set<JWSAlgorithm> = [.rs256, .ps256, .es256]
}
