import Foundation
import VaultCore
import VaultJOSE
import VaultJSON

/// Checks OIDC access tokens as RFC 9068 and RFC 8725 ask, for the issuers the server trusts.
public struct OIDCTokenVerifier: Sendable {
    /// One trusted issuer: its claim rules and where its keys come from.
    public struct TrustedIssuer: Sendable {
        /// The claim rules, with the exact `iss`.
        public let rules: JWTClaimsRules
        /// The issuer's keys.
        public let keys: JWKSSource

        /// Creates a trusted issuer.
        public init(rules: JWTClaimsRules, keys: JWKSSource) {
            self.rules = rules
            self.keys = keys
        }
    }

    /// The media types RFC 9068 §2.1 allows in `typ`.
    static let accessTokenTypes: Set<String> = ["at+jwt", "application/at+jwt"]

    private let issuers: [String: TrustedIssuer]

    /// Creates a verifier for these issuers.
    public init(issuers: [TrustedIssuer]) {
        self.issuers = Dictionary(issuers.map { ($0.rules.issuer, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Verifies an access token and returns the identity it proves.
    ///
    /// - Throws: `AuthenticationFailure` with the reason for the log.
    public func verify(_ token: String, now: UTCTimestamp) throws(AuthenticationFailure) -> SessionIdentity {
        do {
            let jws = try CompactJWS(token)
            guard let type = jws.type?.lowercased(), Self.accessTokenTypes.contains(type) else {
                throw AuthenticationFailure("access token: typ is not at+jwt")
            }
            // The unverified iss only chooses which issuer's keys and rules apply; both are then enforced.
            let claims = try JSONParser(maxDepth: 16).parse(jws.payload)
            guard let issuerName = claims["iss"]?.stringValue, let issuer = issuers[issuerName] else {
                throw AuthenticationFailure("access token: issuer not trusted")
            }
            let keys = try issuer.keys.keys(for: jws.keyID, now: now)
            try jws.verify(with: keys, allowed: JWSAlgorithm.asymmetric)
            let identity = try issuer.rules.validate(claims, now: now.millisecondsSinceEpoch / 1000)
            return identity
        } catch let failure as AuthenticationFailure {
            throw failure
        } catch {
            throw AuthenticationFailure("access token: \(error)")
        }
    }
}
