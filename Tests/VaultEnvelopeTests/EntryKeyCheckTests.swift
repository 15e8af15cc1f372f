import Foundation
import Testing
import VaultCore
import VaultCrypto

@testable import VaultEnvelope

/// Wraps with a function the test supplies: how a forger (or a buggy writer) puts any entry it likes in a blob.
struct ForgedRecipient: KeyWrapping {
    let kekID: String
    let algorithm: KeyWrapAlgorithm
    var canWrapWithoutHolder: Bool { true }
    let make: @Sendable (SymmetricKey) async throws -> WrappedKey

    func wrap(_ dek: SymmetricKey) async throws -> WrappedKey { try await make(dek) }
}

/// FORMAT.md §4.1 and §6: a public-key entry's `jwk` must be the key its `kek_id` names, and a key one may wrap to,
/// before anyone trusts it or a rotating writer re-wraps a new DEK to it (issue 14, attack 5).
@Suite struct EntryKeyCheckTests {
    /// A 1024-bit RSA modulus (made with Python `cryptography`; only its size matters here).
    static let modulus1024 = Base64URL.decode(
        "wkqNvaznGmmR1jimaTVjBcGuF5iKgm_ZJJIz_fo59G1HytkOL-CJQ4FojyYCTadrha9k4WQM1AsmkXTvXgmUuq1Ww1gryEAHFvCgndqodfMNpbv36zcFe7zwc2lGYROeaQe_ddqB8S6la4m4Ydoujz74ByHh6EkvS5-WiM3Ag4k"
    )!
    /// The P-256 point with x = 5, and the same x plus p: below 2^256, so it fits 32 bytes, and it is the same point
    /// reduced mod p; a reader that does not check x < p accepts it.
    static let pointY = Base64URL.decode("RZJDuapYGAb-kTvOmYF63hHKUDxk2aPFM0FcCDJI-8w")!
    static let pointX = Base64URL.decode("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAU")!
    static let pointXPlusP = Base64URL.decode("_____wAAAAEAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAQ")!

    /// A blob a forger made: an honest entry for `honest`, and `forged`.
    static func forgedBlob(honest: DeviceKEK, forged: ForgedRecipient) async throws -> Data {
        try await TestSupport.pair().0.create(
            TestSupport.plaintext, vaultID: "v", recipients: [.init(honest.recipient, label: "Phone"), .init(forged, label: "Tablet")]
        ).blob
    }

    static func parseError(_ blob: Data) -> String? { ReaderRulesTests.parseError(blob) }

    @Test func anEntryWhoseJWKIsAnotherKeyThanItsKEKIDIsRefused() async throws {
        let phone = try DeviceKEK.generate()
        let tablet = try DeviceKEK.generate()
        let attacker = try DeviceKEK.generate()
        // The tablet's kek_id, the attacker's jwk: the tablet's next rotation would re-wrap the new DEK to the attacker.
        let lying = ForgedRecipient(kekID: tablet.kekID, algorithm: .ecdhESA256KW) { dek in
            let real = try await attacker.recipient.wrap(dek)
            return WrappedKey(kekID: tablet.kekID, encryptedKey: real.encryptedKey, scheme: real.scheme, label: nil, created: nil)
        }
        let blob = try await Self.forgedBlob(honest: phone, forged: lying)
        #expect(Self.parseError(blob) == "malformed")
        await #expect { try await TestSupport.pair().1.open(blob, vaultID: "v", keys: [phone]) } throws: {
            VaultEnvelopeError.Code.malformed.matches($0)
        }
    }

    @Test func aRotatingWriterNeverRebuildsARecipientFromAJWKItsKEKIDDoesNotName() throws {
        let tablet = try DeviceKEK.generate()
        let attacker = try DeviceKEK.generate()
        let entry = WrappedKey(
            kekID: tablet.kekID, encryptedKey: Data(count: 40),
            scheme: .ecdhESA256KW(ephemeral: PublicJWK(attacker.privateKey.publicKey), recipient: PublicJWK(attacker.privateKey.publicKey)),
            label: "Tablet", created: nil)
        #expect(PublicKeyRecipient(recipientOf: entry) == nil)
        let honest = WrappedKey(
            kekID: tablet.kekID, encryptedKey: Data(count: 40),
            scheme: .ecdhESA256KW(ephemeral: PublicJWK(attacker.privateKey.publicKey), recipient: PublicJWK(tablet.privateKey.publicKey)),
            label: "Tablet", created: nil)
        #expect(PublicKeyRecipient(recipientOf: honest)?.kekID == tablet.kekID)
    }

    @Test func a1024BitRSAKeyIsRefusedBeforeAnyoneWrapsToIt() async throws {
        let weak = PublicJWK.rsa(n: Self.modulus1024, e: Data([1, 0, 1]))
        let entry = WrappedKey(
            kekID: weak.thumbprint, encryptedKey: SecureRandom.bytes(count: 128), scheme: .rsaOAEP256(recipient: weak),
            label: nil, created: nil)
        // A rotating writer rebuilds recipients from entries: not from this one.
        #expect(PublicKeyRecipient(recipientOf: entry) == nil)
        // And a blob carrying it is refused by every reader, so no writer gets as far as rotating it.
        let blob = try await Self.forgedBlob(
            honest: try DeviceKEK.generate(),
            forged: ForgedRecipient(
                kekID: weak.thumbprint, algorithm: .rsaOAEP256
            ) { _ in entry })
        #expect(Self.parseError(blob) == "weakParameters")
    }

    @Test func offCurveAndOutOfFieldPointsAreRefusedWhenTheBlobIsRead() async throws {
        let phone = try DeviceKEK.generate()
        let onCurve = PublicJWK.p256(x: Self.pointX, y: Self.pointY)
        #expect(
            PublicKeyRecipient(
                recipientOf: WrappedKey(
                    kekID: onCurve.thumbprint, encryptedKey: Data(count: 40), scheme: .ecdhESA256KW(ephemeral: onCurve, recipient: onCurve),
                    label: nil, created: nil)) != nil)
        var offCurveY = Self.pointY
        offCurveY[31] ^= 1
        for bad in [PublicJWK.p256(x: Self.pointXPlusP, y: Self.pointY), PublicJWK.p256(x: Self.pointX, y: offCurveY)] {
            // As the recipient, with a kek_id that is its thumbprint, so only the point check can refuse it.
            let asRecipient = ForgedRecipient(kekID: bad.thumbprint, algorithm: .ecdhESA256KW) { dek in
                let real = try await phone.recipient.wrap(dek)
                guard case .ecdhESA256KW(let epk, _) = real.scheme else { throw VaultEnvelopeError(.cryptoFailure, "test") }
                return WrappedKey(
                    kekID: bad.thumbprint, encryptedKey: real.encryptedKey, scheme: .ecdhESA256KW(ephemeral: epk, recipient: bad),
                    label: nil, created: nil)
            }
            #expect(Self.parseError(try await Self.forgedBlob(honest: phone, forged: asRecipient)) == "malformed")
            // As the ephemeral key of an entry that is otherwise the tablet's own.
            let tablet = try DeviceKEK.generate()
            let asEphemeral = ForgedRecipient(kekID: tablet.kekID, algorithm: .ecdhESA256KW) { dek in
                let real = try await tablet.recipient.wrap(dek)
                return WrappedKey(
                    kekID: tablet.kekID, encryptedKey: real.encryptedKey,
                    scheme: .ecdhESA256KW(ephemeral: bad, recipient: PublicJWK(tablet.privateKey.publicKey)), label: nil, created: nil)
            }
            #expect(Self.parseError(try await Self.forgedBlob(honest: phone, forged: asEphemeral)) == "malformed")
        }
    }

    /// The committed RSA vector with its entry's `jwk` edited, and `kek_id` set to the edited key's thumbprint.
    static func rsaVector(editing edit: (inout [String: Any]) -> Void) throws -> Data {
        let blob = try Data(contentsOf: FormatVectorTests.directory.appendingPathComponent("rsa-oaep-256.blob.json"))
        return try TestSupport.edit(blob) {
            var entries = TestSupport.entries($0)
            var jwk = entries[0]["jwk"] as! [String: Any]
            edit(&jwk)
            let n = Base64URL.decode(jwk["n"] as! String)!
            let e = Base64URL.decode(jwk["e"] as! String)!
            entries[0]["jwk"] = jwk
            entries[0]["kek_id"] = PublicJWK.rsa(n: n, e: e).thumbprint
            $0["wrappedDeks"] = entries
        }
    }

    @Test func leadingZerosInNOrEAreRefused() throws {
        #expect(Self.parseError(try Self.rsaVector { _ in }) == nil)
        #expect(
            Self.parseError(try Self.rsaVector { $0["n"] = Base64URL.encode(Data([0]) + Base64URL.decode($0["n"] as! String)!) })
                == "malformed")
        #expect(Self.parseError(try Self.rsaVector { $0["e"] = Base64URL.encode(Data([0, 1, 0, 1])) }) == "malformed")
    }

    @Test func jwksOfTheWrongTypeCurveOrWithAPrivatePartAreRefused() throws {
        let blob = try Data(contentsOf: FormatVectorTests.directory.appendingPathComponent("ecdh-es+a256kw.blob.json"))
        func editedJWK(_ member: String, _ edit: @escaping (inout [String: Any]) -> Void) throws -> Data {
            try TestSupport.edit(blob) {
                var entries = TestSupport.entries($0)
                var jwk = entries[0][member] as! [String: Any]
                edit(&jwk)
                entries[0][member] = jwk
                $0["wrappedDeks"] = entries
            }
        }
        #expect(Self.parseError(try editedJWK("jwk") { $0["d"] = "AAAA" }) == "malformed")
        #expect(Self.parseError(try editedJWK("jwk") { $0["crv"] = "P-384" }) == "malformed")
        #expect(Self.parseError(try editedJWK("jwk") { $0["kty"] = "oct" }) == "malformed")
        #expect(Self.parseError(try editedJWK("epk") { $0["kid"] = "x" }) == "malformed")
        // An x of 31 bytes (a leading zero dropped) is not the fixed 32-byte form.
        #expect(Self.parseError(try editedJWK("epk") { $0["x"] = Base64URL.encode(Data(repeating: 1, count: 31)) }) == "malformed")
        // An RSA key where the alg needs a P-256 one.
        let rsa = try Data(contentsOf: FormatVectorTests.directory.appendingPathComponent("rsa-oaep-256.blob.json"))
        let rsaJWK = TestSupport.entries(try JSONSerialization.jsonObject(with: rsa) as! [String: Any])[0]["jwk"]!
        #expect(Self.parseError(try editedJWK("jwk") { $0 = rsaJWK as! [String: Any] }) == "malformed")
    }
}
