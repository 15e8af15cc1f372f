import VaultCore

/// The claim checks every accepted JWT must pass (RFC 7519 §4.1, RFC 8725 §3.8–3.10, RFC 9068 §4).
public struct JWTClaimsRules: Sendable, Hashable {
    /// The exact `iss` required.
    public var issuer: String
    /// `aud` must contain at least one of these.
    public var audiences: Set<String>
    /// The authorized party (`azp`, or RFC 9068 `client_id` when `azp` is absent) is always required;
    /// when this is set, it must also be one of these.
    public var allowedAuthorizedParties: Set<String>?
    /// When set, the `scope` claim must list this scope.
    public var requiredScope: String?
    /// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
    public var leewaySeconds: Int64 = 60

    /// Creates rules for one issuer.
    public init(issuer: String, audiences: Set<String>, allowedAuthorizedParties: Set<String>? = nil, requiredScope: String? = nil) {
        self.issuer = issuer
        self.audiences = audiences
        self.allowedAuthorizedParties = allowedAuthorizedParties
        self.requiredScope = requiredScope
    }

    /// The identity a token's claims establish once they pass.
    public struct Identity: Sendable, Hashable {
        /// The token's issuer.
        public let issuer: String
        /// The subject.
        public let subject: String
        /// The authorized party (the OEM's client).
        public let authorizedParty: String

        /// Creates an identity.
        public init(issuer: String, subject: String, authorizedParty: String) {
            self.issuer = issuer
            self.subject = subject
            self.authorizedParty = authorizedParty
        }
    }

    /// Checks a claims set at `now` (seconds since the epoch).
    ///
    /// - Throws: `JWTClaimsError` naming the first rule the claims break.
    public func validate(_ claims: JSONValue, now: Int64) throws(JWTClaimsError) -> Identity {
        guard case .object = claims else { throw JWTClaimsError(.malformed, "claims are not an object") }
        guard let exp = try numericDate(claims, "exp") else { throw JWTClaimsError(.malformed, "exp is missing") }
        guard now - leewaySeconds < exp else { throw JWTClaimsError(.expired, "token expired") }
        if let nbf = try numericDate(claims, "nbf"), now + leewaySeconds < nbf {
            throw JWTClaimsError(.notYetValid, "token not yet valid")
        }
        // RFC 9068 §2.2 makes `iat` the time the token was issued and sets no rule for one in the future; a token
        // "issued" later than any clock skew explains is pre-minted or from a broken issuer clock, and accepting it
        // would let it outlive what its issuer meant, so it is refused like an early `nbf`.
        if let iat = try numericDate(claims, "iat"), now + leewaySeconds < iat {
            throw JWTClaimsError(.notYetValid, "iat is in the future")
        }
        guard claims["iss"]?.stringValue == issuer else { throw JWTClaimsError(.wrongIssuer, "iss does not match") }
        guard audienceMatches(claims["aud"]) else { throw JWTClaimsError(.wrongAudience, "aud does not match") }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else {
            throw JWTClaimsError(.missingSubject, "sub is missing or empty")
        }
        guard let authorizedParty = claims["azp"]?.stringValue ?? claims["client_id"]?.stringValue,
            !authorizedParty.isEmpty
        else { throw JWTClaimsError(.azpNotAllowed, "azp is missing") }
        if let allowed = allowedAuthorizedParties, !allowed.contains(authorizedParty) {
            throw JWTClaimsError(.azpNotAllowed, "azp not allowed")
        }
        if let requiredScope {
            let scopes = claims["scope"]?.stringValue?.split(separator: " ") ?? []
            guard scopes.contains(Substring(requiredScope)) else { throw JWTClaimsError(.wrongScope, "scope missing") }
        }
        return Identity(issuer: issuer, subject: subject, authorizedParty: authorizedParty)
    }

    private func numericDate(_ claims: JSONValue, _ name: String) throws(JWTClaimsError) -> Int64? {
        switch claims[name] {
        case nil: return nil
        case .integer(let value): return value
        case .number(let value) where value.isFinite && abs(value) < 1e15: return Int64(value.rounded(.down))
        default: throw JWTClaimsError(.malformed, "\(name) is not a NumericDate")
        }
    }

    private func audienceMatches(_ aud: JSONValue?) -> Bool {
        switch aud {
        case .string(let value): return audiences.contains(value)
        case .array(let values): return values.contains { $0.stringValue.map(audiences.contains) ?? false }
        default: return false
        }
    }
}
