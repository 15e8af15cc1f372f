import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultJOSE
import VaultJSON
import VaultTestSupport

@Suite("D1 session token exchange")
struct SessionTokenEndpointTests {
    let server: InProcessServer
    let issuer = TestIssuer.shared

    init() throws {
        server = try InProcessServer(TestServerOptions())
    }

    func mint(_ token: String) async throws -> APIReply {
        try await server.send("POST", "/wallet-session-token.ashx", headers: ["Authorization": "Bearer \(token)"])
    }

    @Test(arguments: [JWSAlgorithm.rs256, .ps256, .es256])
    func mintsForEachIssuerAlgorithm(algorithm: JWSAlgorithm) async throws {
        let reply = try await mint(issuer.accessToken(algorithm: algorithm))
        #expect(reply.status == 200)
        let body = reply.json
        #expect(body["token_type"] as? String == "Bearer")
        #expect(body["expires_in"] as? Int == 600)
        #expect(body["aud"] as? String == "wallet-backup")
        #expect(body["issued_token_type"] as? String == "urn:ietf:params:oauth:token-type:jwt")
        #expect(reply.header("Cache-Control") == "no-store")

        let jws = try CompactJWS(try #require(body["access_token"] as? String))
        #expect(jws.algorithm == .hs256)
        #expect(jws.type == "wallet-session+jwt")
        #expect(jws.keyID == "s1")
        let claims = try JSONParser().parse(jws.payload)
        #expect(claims["aud"] == .string("wallet-backup"))
        #expect(claims["iss"] == .string("walletvault"))
        #expect(claims["sub"] == .string("alice"))
        #expect(claims["azp"] == .string("oem-a"))
        #expect(claims["oidc_iss"] == .string(issuer.issuer))
        #expect(claims["scope"] == .string("wallet-backup.ashx"))
        let issuedAt = try #require(claims["iat"]?.integerValue)
        #expect(claims["exp"]?.integerValue == issuedAt + 600)
        #expect(claims["nbf"]?.integerValue == issuedAt)
        #expect(claims["jti"]?.stringValue?.isEmpty == false)
    }

    @Test func acceptsTheRFC8693Form() async throws {
        let form =
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
            + "&subject_token=\(issuer.accessToken())"
            + "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"
        let reply = try await server.send(
            "POST", "/wallet-session-token.ashx",
            headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Data(form.utf8))
        #expect(reply.status == 200)
        #expect(reply.json["issued_token_type"] as? String == "urn:ietf:params:oauth:token-type:jwt")

        let wrongGrant = try await server.send(
            "POST", "/wallet-session-token.ashx",
            headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data("grant_type=password&subject_token=x".utf8))
        #expect(wrongGrant.status == 400)
        #expect(wrongGrant.json["error"] as? String == "unsupported_grant_type")
        let wrongType = try await server.send(
            "POST", "/wallet-session-token.ashx", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data(
                "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=x&subject_token_type=id_token".utf8))
        #expect(wrongType.status == 400)
        #expect(wrongType.json["error"] as? String == "invalid_request")
    }

    /// Every way a token can be wrong, each answered with the same 401.
    static func hostileTokens() throws -> [(String, String)] {
        let issuer = TestIssuer.shared
        let now = Date()
        let rsa = issuer.signers[.rs256]!
        guard case .rsa(let rsaKey, _) = rsa.key else { return [] }
        // HS256 keyed with the RSA public key's bytes: the classic key-confusion attack.
        let confusion = JWSSigner(keyID: rsa.keyID, key: .hmac(SymmetricKey(data: rsaKey.publicKey.modulus)))
        let claims = try JSONSerialization.data(withJSONObject: [
            "iss": issuer.issuer, "aud": issuer.audience, "sub": "alice", "azp": "oem-a",
            "exp": Int(now.timeIntervalSince1970) + 300,
        ])
        let header = Base64URL.encode(Data(#"{"alg":"none","typ":"at+jwt"}"#.utf8))
        let valid = issuer.accessToken()
        let stranger = JWSSigner(keyID: rsa.keyID, key: .rsa(try RSA.Signing.PrivateKey(keySize: 2048), .rs256))
        return [
            ("expired", issuer.accessToken(now: now.addingTimeInterval(-400))),
            ("not yet valid", issuer.accessToken { $0["nbf"] = Int(now.timeIntervalSince1970) + 300 }),
            ("wrong aud", issuer.accessToken { $0["aud"] = "someone-else" }),
            ("untrusted iss", issuer.accessToken { $0["iss"] = "https://evil.test" }),
            ("azp not allowed", issuer.accessToken(azp: "oem-z")),
            ("no sub", issuer.accessToken { $0["sub"] = nil }),
            ("wrong typ", issuer.accessToken(type: "JWT")),
            ("no typ", issuer.accessToken(type: nil)),
            ("alg none", header + "." + Base64URL.encode(claims) + "."),
            ("HS256 with the RSA public key", try confusion.sign(payload: claims, type: "at+jwt")),
            ("signed by a stranger with a known kid", try stranger.sign(payload: claims, type: "at+jwt")),
            ("truncated signature", String(valid.dropLast(4))),
            ("unknown kid", try JWSSigner(keyID: "nope", key: rsa.key).sign(payload: claims, type: "at+jwt")),
            ("garbage", "not-a-token"),
            ("other issuer's key for this issuer", try TestIssuer.other.signers[.rs256]!.sign(payload: claims, type: "at+jwt")),
        ]
    }

    @Test func refusesEveryBadTokenWithOneAnswer() async throws {
        var bodies = Set<Data>()
        for (name, token) in try Self.hostileTokens() {
            let reply = try await mint(token)
            #expect(reply.status == 401, "\(name)")
            #expect(reply.json["error"] as? String == "invalid_token", "\(name)")
            #expect(reply.header("WWW-Authenticate") == "Bearer error=\"invalid_token\"", "\(name)")
            #expect(!String(decoding: reply.body, as: UTF8.self).contains(token), "\(name)")
            bodies.insert(reply.body)
        }
        #expect(bodies.count == 1)
        let missing = try await server.send("POST", "/wallet-session-token.ashx")
        #expect(missing.status == 401)
        #expect(bodies.contains(missing.body))
    }

    @Test func sessionTokenCannotMintAnother() async throws {
        let session = try await server.sessionToken(for: issuer.accessToken())
        #expect(try await mint(session).status == 401)
    }

    @Test func logsTheReasonButNeverTheToken() async throws {
        let token = issuer.accessToken(azp: "oem-z")
        #expect(try await mint(token).status == 401)
        let log = server.log()
        #expect(log.contains("azp not allowed"))
        #expect(!log.contains(token))
        #expect(!log.contains(String(token.split(separator: ".")[2])))
    }

    @Test func onlyPost() async throws {
        let reply = try await server.send("GET", "/wallet-session-token.ashx")
        #expect(reply.status == 405)
        #expect(reply.header("Allow") == "POST")
    }
}
