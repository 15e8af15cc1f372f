import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultJOSE

@Suite struct CompactJWSTests {
    let hmacKey = SymmetricKey(data: Data(repeating: 4, count: 32))

    func token(header: String, payload: String = "{}", key: SymmetricKey? = nil) -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(payload.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key ?? hmacKey)
        return input + "." + Base64URL.encode(mac)
    }

    func code(_ text: String, keys: JSONWebKeySet? = nil) -> JOSEError.Code? {
        do {
            try CompactJWS(text).verify(
                with: keys ?? JSONWebKeySet(keys: [JSONWebKey(keyID: "k", material: .hmac(hmacKey))]),
                allowed: [.hs256])
            return nil
        } catch {
            return (error as JOSEError).code
        }
    }

    @Test func acceptsAGoodToken() {
        #expect(code(token(header: #"{"alg":"HS256","kid":"k"}"#)) == nil)
        #expect(code(token(header: #"{"alg":"HS256"}"#)) == nil)
    }

    @Test func refusesHeaderTricks() {
        #expect(code(token(header: #"{"alg":"none"}"#)) == .algorithmNotAllowed)
        #expect(code(token(header: #"{"alg":"HS512","kid":"k"}"#)) == .algorithmNotAllowed)
        #expect(code(token(header: #"{"alg":"HS256","crit":["b64"],"b64":false}"#)) == .unsupportedHeader)
        #expect(code(token(header: #"{"alg":"HS256","alg":"none"}"#)) == .malformed)
        #expect(code(token(header: #"["HS256"]"#)) == .malformed)
        #expect(code(token(header: #"{"alg":"HS256","kid":"other"}"#)) == .unknownKey)
        #expect(code(token(header: #"{"alg":"HS256","kid":"k"}"#, key: SymmetricKey(size: .bits256))) == .badSignature)
        #expect(code("a.b") == .malformed)
        #expect(code("a.b.c.d") == .malformed)
        #expect(code(String(repeating: "a", count: 20_000)) == .malformed)
    }

    @Test func es256SignaturesAreRawNotDER() throws {
        let key = try P256.Signing.PrivateKey()
        let signer = JWSSigner(keyID: "e", key: .p256(key))
        let good = try signer.sign(payload: Data("{}".utf8), type: nil)
        let keys = JSONWebKeySet(keys: [JSONWebKey(keyID: "e", material: .p256(key.publicKey))])
        try CompactJWS(good).verify(with: keys, allowed: [.es256])
        let parts = good.split(separator: ".")
        let der = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2]))).derRepresentation
        let derToken = "\(parts[0]).\(parts[1]).\(Base64URL.encode(der))"
        #expect(throws: JOSEError.self) { try CompactJWS(derToken).verify(with: keys, allowed: [.es256]) }
        // The same key cannot be talked into verifying an HMAC.
        #expect(throws: JOSEError.self) { try CompactJWS(good).verify(with: keys, allowed: [.hs256]) }
    }

    @Test func rsaKeyNamesItsAlgorithm() throws {
        let key = try RSA.Signing.PrivateKey(keySize: 2048)
        let ps256 = try JWSSigner(keyID: "r", key: .rsa(key, .ps256)).sign(payload: Data("{}".utf8), type: nil)
        let pinnedToRS256 = JSONWebKeySet(keys: [JSONWebKey(keyID: "r", material: .rsa(key.publicKey), algorithm: .rs256)])
        let error = #expect(throws: JOSEError.self) { try CompactJWS(ps256).verify(with: pinnedToRS256, allowed: JWSAlgorithm.asymmetric) }
        #expect(error?.code == .unknownKey)
        let either = JSONWebKeySet(keys: [JSONWebKey(keyID: "r", material: .rsa(key.publicKey))])
        try CompactJWS(ps256).verify(with: either, allowed: JWSAlgorithm.asymmetric)
    }
}
