import Foundation
import VaultCore
import VaultCrypto
import VaultHTTP
import VaultJOSE
import VaultServer

/// A development OIDC issuer under `/dev-oidc/`: discovery, JWKS and a token endpoint that
/// signs an access token for any `sub` and `azp`. Trusted in `--dev` mode only.
public struct DevOIDCProvider: MountedIssuer {
    /// The issuer identifier of the development tokens.
    public static let issuer = "urn:walletvault:dev-oidc"
    /// The audience of the development tokens.
    public static let audience = "walletvault-dev"
    /// Lifetime of a development access token, in seconds.
    static let lifetime: Int64 = 3600

    public let pathPrefix = "/dev-oidc/"
    public let knownPaths: Set<String> = ["/dev-oidc/token", "/dev-oidc/jwks", "/dev-oidc/.well-known/openid-configuration"]
    public let startupWarning = "DEVELOPMENT MODE: the built-in /dev-oidc/ issuer signs a token for anyone. Never expose this server."

    private let signer: JWSSigner
    private let clock: any ServerClock

    /// Creates the provider around an RS256 signing key.
    public init(signingKey: RSA.Signing.PrivateKey, clock: any ServerClock) {
        signer = JWSSigner(keyID: "dev-rs256", key: .rsa(signingKey, .rs256))
        self.clock = clock
    }

    /// The issuer entry the server trusts in dev mode.
    public var trustedIssuer: OIDCTokenVerifier.TrustedIssuer {
        OIDCTokenVerifier.TrustedIssuer(
            rules: JWTClaimsRules(issuer: Self.issuer, audiences: [Self.audience]),
            keys: JWKSSource(
                keys: JSONWebKeySet(keys: [JSONWebKey(keyID: signer.keyID, material: .rsa(signerPublicKey), algorithm: .rs256)])))
    }

    private var signerPublicKey: RSA.Signing.PublicKey {
        guard case .rsa(let key, _) = signer.key else { preconditionFailure("the dev signer is RSA") }
        return key.publicKey
    }

    public func handle(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let base = "http://\(request.header("host") ?? "127.0.0.1")/dev-oidc"
        switch (request.method, request.path) {
        case ("GET", "/dev-oidc/.well-known/openid-configuration"):
            struct Discovery: Encodable {
                let issuer: String
                let jwks_uri: String
                let token_endpoint: String
                let token_endpoint_auth_methods_supported = ["none"]
                let id_token_signing_alg_values_supported = ["RS256"]
            }
            return .json(200, Discovery(issuer: Self.issuer, jwks_uri: "\(base)/jwks", token_endpoint: "\(base)/token"))
        case ("GET", "/dev-oidc/jwks"):
            return .json(200, ["keys": [signer.publicJWK ?? [:]]])
        case ("POST", "/dev-oidc/token"):
            return try token(FormBody(request.body))
        case (_, "/dev-oidc/.well-known/openid-configuration"), (_, "/dev-oidc/jwks"):
            throw APIError.methodNotAllowed(allow: ["GET"])
        case (_, "/dev-oidc/token"):
            throw APIError.methodNotAllowed(allow: ["POST"])
        default:
            throw APIError.unknownPath
        }
    }

    private func token(_ form: FormBody) throws(APIError) -> HTTPResponse {
        guard let subject = form["sub"], let party = form["azp"], !subject.isEmpty, !party.isEmpty,
            subject.count <= 256, party.count <= 256
        else { throw APIError(.invalidRequest, "form fields sub and azp are required (1 to 256 characters)") }
        let issuedAt = clock.now().millisecondsSinceEpoch / 1000
        let claims: [String: JSONScalar] = [
            "iss": .string(Self.issuer), "aud": .string(Self.audience), "sub": .string(subject), "azp": .string(party),
            "client_id": .string(party), "scope": .string("openid"), "iat": .integer(issuedAt),
            "exp": .integer(issuedAt + Self.lifetime), "jti": .string(Base64URL.encode(SecureRandom.bytes(count: 16))),
        ]
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let token = try signer.sign(payload: try encoder.encode(claims), type: "at+jwt")
            struct Issued: Encodable {
                let access_token: String
                let token_type = "Bearer"
                let expires_in: Int64
            }
            return .json(200, Issued(access_token: token, expires_in: Self.lifetime), headers: [("Cache-Control", "no-store")])
        } catch {
            throw APIError.internalError
        }
    }
}
