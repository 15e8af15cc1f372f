import Foundation
import Testing

@testable import VaultCrypto

@Suite struct ECDHTests {
    @Test func bothSidesAgree() throws {
        let alice = try P256.KeyAgreement.PrivateKey()
        let bob = try P256.KeyAgreement.PrivateKey()
        let bobReceived = try P256.KeyAgreement.PublicKey(x963Representation: alice.publicKey.x963Representation)
        let aliceSecret = try alice.sharedSecretFromKeyAgreement(with: bob.publicKey)
        let bobSecret = try bob.sharedSecretFromKeyAgreement(with: bobReceived)
        #expect(aliceSecret.withUnsafeBytes { Data($0) } == bobSecret.withUnsafeBytes { Data($0) })
        #expect(aliceSecret.withUnsafeBytes { $0.count } == 32)
        #expect(aliceSecret.description == "SharedSecret(32 bytes)")
        let info = Data("vault-sync v1".utf8)
        let aliceKey = try aliceSecret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: Data(), sharedInfo: info, outputByteCount: 32)
        let bobKey = try bobSecret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: Data(), sharedInfo: info, outputByteCount: 32)
        #expect(aliceKey == bobKey)
        let eve = try P256.KeyAgreement.PrivateKey()
        #expect(
            try eve.sharedSecretFromKeyAgreement(with: bob.publicKey).withUnsafeBytes { Data($0) }
                != aliceSecret.withUnsafeBytes { Data($0) })
    }

    @Test func invalidPeerPointsAreRefused() throws {
        let valid = try P256.KeyAgreement.PrivateKey().publicKey.x963Representation
        var offCurve = valid
        offCurve[40] ^= 0x01
        var compressed = Data([0x02 | (valid[64] & 1)])
        compressed.append(valid[1...32])
        for point in [offCurve, compressed, Data([0x00]), Data(count: 65)] {
            #expect { try P256.KeyAgreement.PublicKey(x963Representation: point) } throws: {
                ($0 as? CryptoError)?.code == .invalidPublicKey
            }
        }
    }

    @Test func keyRepresentationsRoundTrip() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let peer = try P256.KeyAgreement.PrivateKey().publicKey
        let expected = try key.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Data($0) }
        for copy in [
            try P256.KeyAgreement.PrivateKey(pemRepresentation: key.pemRepresentation),
            try P256.KeyAgreement.PrivateKey(derRepresentation: key.derRepresentation),
            try P256.KeyAgreement.PrivateKey(rawRepresentation: key.rawRepresentation),
        ] {
            #expect(try copy.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Data($0) } == expected)
        }
        for copy in [
            try P256.KeyAgreement.PublicKey(pemRepresentation: peer.pemRepresentation),
            try P256.KeyAgreement.PublicKey(derRepresentation: peer.derRepresentation),
            try P256.KeyAgreement.PublicKey(rawRepresentation: peer.rawRepresentation),
        ] {
            #expect(copy.x963Representation == peer.x963Representation)
        }
    }
}

@Suite struct RSAOAEPTests {
    /// Reuses the signing test key through PEM: generation is the slow part.
    static let key: RSA.Encryption.PrivateKey = {
        do { return try RSA.Encryption.PrivateKey(pemRepresentation: SharedKeys.rsa.pemRepresentation) } catch {
            fatalError("\(error)")
        }
    }()

    @Test func encryptDecryptRoundTrip() throws {
        let cek = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let ciphertext = try Self.key.publicKey.encrypt(cek)
        #expect(ciphertext.count == 256)
        #expect(try Self.key.decrypt(ciphertext) == cek)
        #expect(try Self.key.publicKey.encrypt(cek) != ciphertext)
    }

    @Test func tamperedOrForeignCiphertextIsRefused() throws {
        var ciphertext = try Self.key.publicKey.encrypt(Data("secret".utf8))
        ciphertext[200] ^= 1
        #expect { try Self.key.decrypt(ciphertext) } throws: { ($0 as? CryptoError)?.code == .authenticationFailure }
        let labelled = try Self.key.publicKey.encrypt(Data("secret".utf8), label: Data("other".utf8))
        #expect { try Self.key.decrypt(labelled) } throws: { ($0 as? CryptoError)?.code == .authenticationFailure }
    }

    @Test func messageLengthLimit() throws {
        #expect(try Self.key.publicKey.encrypt(Data(count: 190)).count == 256)
        #expect { try Self.key.publicKey.encrypt(Data(count: 191)) } throws: { ($0 as? CryptoError)?.code == .invalidParameter }
    }

    @Test func pemAndDERRoundTrips() throws {
        let publicKey = Self.key.publicKey
        let fromPEM = try RSA.Encryption.PublicKey(pemRepresentation: publicKey.pemRepresentation)
        let fromDER = try RSA.Encryption.PublicKey(derRepresentation: publicKey.derRepresentation)
        let fromParts = try RSA.Encryption.PublicKey(modulus: publicKey.modulus, exponent: publicKey.exponent)
        let message = Data("round trip".utf8)
        for copy in [fromPEM, fromDER, fromParts] {
            #expect(try Self.key.decrypt(try copy.encrypt(message)) == message)
        }
        let privateCopy = try RSA.Encryption.PrivateKey(derRepresentation: Self.key.derRepresentation)
        #expect(try privateCopy.decrypt(try publicKey.encrypt(message)) == message)
    }

    @Test func weakKeysAreRefused() {
        #expect { try RSA.Encryption.PrivateKey(keySize: 1024) } throws: { ($0 as? CryptoError)?.code == .weakParameters }
        #expect { try RSA.Encryption.PublicKey(modulus: Self.key.publicKey.modulus.prefix(200), exponent: [1, 0, 1]) } throws: {
            ($0 as? CryptoError)?.code == .weakParameters
        }
    }
}
