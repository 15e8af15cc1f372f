import Foundation
import VaultCore
import VaultCrypto
import VaultJOSE
import VaultJSON

/// Mints and checks the narrow HS256 session tokens of D1, explicitly typed (RFC 8725 §3.11).
public struct SessionTokenService: Sendable {
    /// The `typ` of a session token; an OIDC access token (`at+jwt`) can never pass for one.
    public static let tokenType = "wallet-session+jwt"
    /// The `aud` of a session token.
    public static let audience = "wallet-backup"
    /// The `scope` of a session token.
    public static let scope = "wallet-backup.ashx"
    /// Lifetime in seconds.
    public static let lifetime: Int64 = 600

    private let issuer: String
    /// The OIDC issuers a session token's `oidc_iss` may name; nil accepts any.
    private let oidcIssuers: Set<String>?
    private let signer: JWSSigner
    /// The header every session token carries, encoded once.
    private let header: JWSSigner.EncodedHeader
    private let verificationKeys: JSONWebKeySet
    /// Where each token's `jti` comes from.
    private let randomBytes = RandomBytePool()

    /// One session key: a `kid` and a secret of at least 32 bytes.
    public struct Key: Sendable {
        /// The key identifier.
        public let keyID: String
        /// The secret.
        public let secret: Data

        /// Creates a key.
        public init(keyID: String, secret: Data) {
            self.keyID = keyID
            self.secret = secret
        }
    }

    /// Creates the service; the first key signs, all keys verify (for rotation).
    ///
    /// `oidcIssuers`, when given, are the OIDC issuers the server trusts: a session token naming another in
    /// `oidc_iss` (signed with a current key, so minted before that issuer was removed, or forged with a leaked
    /// key) is refused rather than acted on.
    /// - Throws: `ServerStartupError` when there is no key, a secret is short, or a `kid` repeats.
    public init(issuer: String, keys: [Key], oidcIssuers: Set<String>? = nil) throws(ServerStartupError) {
        guard let first = keys.first else { throw ServerStartupError("session_keys_file: at least one key is required") }
        guard keys.allSatisfy({ $0.secret.count >= 32 && !$0.keyID.isEmpty }) else {
            throw ServerStartupError("session_keys_file: every key needs a kid and a secret of at least 32 bytes")
        }
        guard Set(keys.map(\.keyID)).count == keys.count else { throw ServerStartupError("session_keys_file: kids repeat") }
        self.issuer = issuer
        self.oidcIssuers = oidcIssuers
        signer = JWSSigner(keyID: first.keyID, key: .hmac(SymmetricKey(data: first.secret)))
        header = signer.header(type: Self.tokenType)
        verificationKeys = JSONWebKeySet(
            keys: keys.map {
                JSONWebKey(keyID: $0.keyID, material: .hmac(SymmetricKey(data: $0.secret)), algorithm: .hs256)
            })
    }

    /// Reads keys from a `session_keys_file`: `[{"kid": "...", "secret": "<base64url>"}]`.
    ///
    /// - Throws: `ServerStartupError` naming the file.
    public static func keys(fromFile path: String) throws(ServerStartupError) -> [Key] {
        struct Entry: Decodable {
            let kid: String
            let secret: String
        }
        guard let data = FileManager.default.contents(atPath: path),
            let entries = try? JSONDecoder().decode([Entry].self, from: data)
        else { throw ServerStartupError("session_keys_file \(path): expected [{\"kid\", \"secret\"}]") }
        var keys: [Key] = []
        for entry in entries {
            guard let secret = Base64URL.decode(entry.secret) else {
                throw ServerStartupError("session_keys_file \(path): secret of \(entry.kid) is not base64url")
            }
            keys.append(Key(keyID: entry.kid, secret: secret))
        }
        return keys
    }

    /// Mints a session token for an identity at `now`.
    ///
    /// - Throws: only if signing fails, which HMAC does not.
    public func mint(for identity: SessionIdentity, now: UTCTimestamp) throws -> String {
        let issuedAt = now.millisecondsSinceEpoch / 1000
        // Members sorted by name, as before. PortableJSONSerializer writes byte for byte what jansson writes (held to it
        // by its tests and the FuzzPortableJSON target) without jansson's node per value, hash table per object and
        // two dumps (one to size the text); JSONEncoder cost six times as much as jansson.
        let claims: JSONValue = .object([
            ("aud", .string(Self.audience)), ("azp", .string(identity.authorizedParty)),
            ("exp", .integer(issuedAt + Self.lifetime)), ("iat", .integer(issuedAt)), ("iss", .string(issuer)),
            ("jti", .string(Base64URL.encode(randomBytes.bytes(count: 16)))), ("nbf", .integer(issuedAt)),
            ("oidc_iss", .string(identity.issuer)), ("scope", .string(Self.scope)), ("sub", .string(identity.subject)),
        ])
        return try signer.sign(payload: PortableJSONSerializer.data(of: claims), header: header)
    }

    /// A verified session: whom it acts for and until when it verifies.
    public struct Verified: Sendable {
        /// Whom the token acts for.
        public let identity: SessionIdentity
        /// The last instant, in milliseconds, at which the token still verifies (`exp` plus leeway).
        public let validUntil: Int64
    }

    /// Checks a session token and returns whom it acts for.
    ///
    /// - Throws: `AuthenticationFailure` with the reason for the log.
    public func verify(_ token: String, now: UTCTimestamp) throws(AuthenticationFailure) -> Verified {
        do {
            let jws = try CompactJWS(token)
            guard jws.type == Self.tokenType else { throw AuthenticationFailure("session token: wrong typ") }
            try jws.verify(with: verificationKeys, allowed: [.hs256])
            let claims = try JSONParser(maxDepth: 8).parse(jws.payload)
            let rules = JWTClaimsRules(issuer: issuer, audiences: [Self.audience], requiredScope: Self.scope)
            let identity = try rules.validate(claims, now: now.millisecondsSinceEpoch / 1000)
            guard let oidcIssuer = claims["oidc_iss"]?.stringValue, let expiry = claims["exp"]?.integerValue,
                expiry < Int64.max / 1000 - rules.leewaySeconds
            else { throw AuthenticationFailure("session token: oidc_iss or an integer exp missing") }
            if let oidcIssuers, !oidcIssuers.contains(oidcIssuer) {
                throw AuthenticationFailure("session token: oidc_iss is no configured issuer")
            }
            return Verified(
                identity: SessionIdentity(issuer: oidcIssuer, subject: identity.subject, authorizedParty: identity.authorizedParty),
                validUntil: (expiry + rules.leewaySeconds) * 1000)
        } catch let failure as AuthenticationFailure {
            throw failure
        } catch {
            throw AuthenticationFailure("session token: \(error)")
        }
    }
}
