import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultJOSE
import VaultJSON

@Suite struct JWSSignerTests {
    let secret = SymmetricKey(data: Data(repeating: 9, count: 32))

    /// The token as RFC 7515 §7.1 spells it, assembled from strings: what the one-buffer writer must equal.
    func reference(header: String, payload: Data) -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: secret))
    }

    @Test(arguments: [0, 1, 2, 3, 4, 5, 300, 1000])
    func anEncodedHeaderSignsWhatTheSpelledOutTokenIs(payloadCount: Int) throws {
        let signer = JWSSigner(keyID: "s1", key: .hmac(secret))
        let payload = Data((0..<payloadCount).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let header = signer.header(type: "wallet-session+jwt")
        let expected = reference(header: #"{"alg":"HS256","kid":"s1","typ":"wallet-session+jwt"}"#, payload: payload)
        #expect(try signer.sign(payload: payload, header: header) == expected)
        #expect(try signer.sign(payload: payload, type: "wallet-session+jwt") == expected)
        // The same header signs again, and what it signs verifies.
        let again = try signer.sign(payload: payload, header: header)
        let keys = JSONWebKeySet(keys: [JSONWebKey(keyID: "s1", material: .hmac(secret), algorithm: .hs256)])
        try CompactJWS(again).verify(with: keys, allowed: [.hs256])
        #expect(try CompactJWS(again).payload == payload)
    }

    @Test func extraMembersAndNoTypeAreSortedIntoTheHeader() throws {
        let signer = JWSSigner(keyID: "k", key: .hmac(secret))
        let payload = Data("{}".utf8)
        #expect(try signer.sign(payload: payload, type: nil) == reference(header: #"{"alg":"HS256","kid":"k"}"#, payload: payload))
        #expect(
            try signer.sign(payload: payload, type: "at+jwt", extraHeader: ["b": "2", "z": "1"])
                == reference(header: #"{"alg":"HS256","b":"2","kid":"k","typ":"at+jwt","z":"1"}"#, payload: payload))
    }

    @Test func asymmetricSignersWriteTokensThatVerify() throws {
        let rsa = try RSA.Signing.PrivateKey(keySize: 2048)
        let p256 = try P256.Signing.PrivateKey()
        let cases: [(JWSSigner, JSONWebKey.Material, JWSAlgorithm)] = [
            (JWSSigner(keyID: "r", key: .rsa(rsa, .rs256)), .rsa(rsa.publicKey), .rs256),
            (JWSSigner(keyID: "p", key: .rsa(rsa, .ps256)), .rsa(rsa.publicKey), .ps256),
            (JWSSigner(keyID: "e", key: .p256(p256)), .p256(p256.publicKey), .es256),
        ]
        for (signer, material, algorithm) in cases {
            let token = try signer.sign(payload: Data(#"{"sub":"a"}"#.utf8), header: signer.header(type: "at+jwt"))
            let keys = JSONWebKeySet(keys: [JSONWebKey(keyID: signer.keyID, material: material, algorithm: algorithm)])
            try CompactJWS(token).verify(with: keys, allowed: [algorithm])
        }
    }
}
