import Foundation
import VaultCore
import VaultCrypto
import VaultJOSE

/// A stand-in OIDC provider for tests: keys of each supported algorithm and a JWKS file.
public struct TestIssuer: Sendable {
    /// The `iss` of its tokens.
    public let issuer: String
    /// The `aud` of its tokens.
    public let audience: String
    /// One signer per algorithm it offers.
    public let signers: [JWSAlgorithm: JWSSigner]

    /// The issuer most tests trust.
    public static let shared = TestIssuer(issuer: "https://idp.test", audience: "wallet-app", idPrefix: "idp")
    /// A second trusted issuer, with other keys.
    public static let other = TestIssuer(issuer: "https://other-idp.test", audience: "wallet-app", idPrefix: "other")

    /// An issuer with fresh keys; `idPrefix` starts their `kid`s.
    public init(issuer: String, audience: String, idPrefix: String) {
        self.issuer = issuer
        self.audience = audience
        signers = [
            .rs256: JWSSigner(keyID: "\(idPrefix)-rs256", key: .rsa(try! RSA.Signing.PrivateKey(keySize: 2048), .rs256)),
            .ps256: JWSSigner(keyID: "\(idPrefix)-ps256", key: .rsa(try! RSA.Signing.PrivateKey(keySize: 2048), .ps256)),
            .es256: JWSSigner(keyID: "\(idPrefix)-es256", key: .p256(try! P256.Signing.PrivateKey())),
        ]
    }

    /// Its public keys as a JWKS document.
    public var jwks: Data {
        try! JSONSerialization.data(withJSONObject: ["keys": signers.values.compactMap(\.publicJWK)])
    }

    /// An access token with standard claims, edited by `edit`.
    public func accessToken(
        sub: String = "alice", azp: String = "oem-a", algorithm: JWSAlgorithm = .rs256, type: String? = "at+jwt",
        now: Date = Date(), edit: (inout [String: Any]) -> Void = { _ in }
    ) -> String {
        let issuedAt = Int(now.timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": issuer, "aud": audience, "sub": sub, "azp": azp, "iat": issuedAt, "exp": issuedAt + 300,
            "jti": UUID().uuidString, "client_id": azp,
        ]
        edit(&claims)
        let payload = try! JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return try! signers[algorithm]!.sign(payload: payload, type: type)
    }
}
