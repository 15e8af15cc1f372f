import Foundation
import Testing
import VaultCore
import VaultCrypto

@testable import VaultEnvelope

/// Blobs built step by step as the seed's iOS and Android code builds them open, and upgrade to the extended form.
@Suite struct SeedCompatibilityTests {
    struct Vault: Codable { let items: [String: String] }

    /// The seed's §3 iOS code, with this package's CryptoKit-shaped API in place of CryptoKit.
    static func iOSSeedBlob(kekPriv: P256.KeyAgreement.PrivateKey, plaintext: Data? = nil) throws -> (blob: Data, plaintext: Data) {
        let dek = SymmetricKey(size: .bits256)
        let sharedSecret = try kekPriv.sharedSecretFromKeyAgreement(with: kekPriv.publicKey)
        let wrappingKey = try sharedSecret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: Data(), sharedInfo: "vault-kek-v1".data(using: .utf8)!, outputByteCount: 32)
        let sealedDek = try AES.GCM.seal(dek.withUnsafeBytes { Data($0) }, using: wrappingKey)
        let plaintext = try plaintext ?? JSONEncoder().encode(Vault(items: ["pid": "PID credential"]))
        let sealedVault = try AES.GCM.seal(plaintext, using: dek)
        let iv = sealedVault.nonce.withUnsafeBytes { Data($0) }
        let blob: [String: Any] = [
            "v": 1,
            "wrappedDeks": [
                [
                    "kek_id": Base64URL.encode(kekPriv.publicKey.rawRepresentation),
                    "dek_cipher": Base64URL.encode(sealedDek.nonce.withUnsafeBytes { Data($0) } + sealedDek.ciphertext + sealedDek.tag),
                ]
            ],
            "cipher": Base64URL.encode(sealedVault.ciphertext),
            "iv": Base64URL.encode(iv),
            "tag": Base64URL.encode(sealedVault.tag),
            "updatedUtc": ISO8601DateFormatter().string(from: Date()),
            "hint": "iPhone 15 Pro",
        ]
        return (try JSONSerialization.data(withJSONObject: blob), plaintext)
    }

    /// The seed's §3 Android code (`AES/GCM/NoPadding`, random IV from the cipher), with `wrapIv` prepended to
    /// `doFinal(dek)` in `dek_cipher` as FORMAT.md specifies, and the Keystore alias as `kek_id`.
    static func androidSeedBlob(kek: SymmetricKey, plaintext: Data = Data(#"{"items":{}}"#.utf8)) throws -> (blob: Data, plaintext: Data) {
        let dek = SecureRandom.bytes(count: 32)
        let wrap = try AES.GCM.seal(dek, using: kek)
        let wrappedDek = wrap.ciphertext + wrap.tag  // what doFinal returns
        let wrapIv = wrap.nonce.withUnsafeBytes { Data($0) }
        let vault = try AES.GCM.seal(plaintext, using: SymmetricKey(data: dek))
        let blob: [String: Any] = [
            "v": 1,
            "wrappedDeks": [["kek_id": "vault-kek", "dek_cipher": Base64URL.encode(wrapIv + wrappedDek)]],
            "cipher": Base64URL.encode(vault.ciphertext),
            "iv": Base64URL.encode(vault.nonce.withUnsafeBytes { Data($0) }),
            "tag": Base64URL.encode(vault.tag),
            "updatedUtc": "2026-08-12T19:00:00Z",
            "hint": "Pixel 8",
        ]
        return (try JSONSerialization.data(withJSONObject: blob), plaintext)
    }

    @Test func iOSSeedBlobOpens() async throws {
        let kekPriv = try P256.KeyAgreement.PrivateKey()
        let (blob, plaintext) = try Self.iOSSeedBlob(kekPriv: kekPriv)
        let opened = try await TestSupport.pair().1.open(blob, vaultID: "v", keys: [SelfECDHKEK(privateKey: kekPriv)])
        #expect(opened.plaintext == plaintext)
        #expect(opened.state.envelope.form == .seed)
        #expect(opened.state.counter == 0)
    }

    @Test func androidSeedBlobOpens() async throws {
        let kek = SymmetricKey(size: .bits256)
        let (blob, plaintext) = try Self.androidSeedBlob(kek: kek)
        let key = AESGCMKEK(key: kek, kekID: "vault-kek")
        #expect(try await TestSupport.pair().1.open(blob, vaultID: "v", keys: [key]).plaintext == plaintext)
    }

    @Test func seedFormHasNoIntegrityForItsHeaderButItsCiphertextIsChecked() async throws {
        let kekPriv = try P256.KeyAgreement.PrivateKey()
        let (blob, _) = try Self.iOSSeedBlob(kekPriv: kekPriv)
        let key = SelfECDHKEK(privateKey: kekPriv)
        // The seed binds nothing: an edited hint goes unnoticed, which is why the extended form exists.
        _ = try await TestSupport.pair().1.open(try TestSupport.edit(blob) { $0["hint"] = "other" }, vaultID: "v", keys: [key])
        let flipped = try TestSupport.edit(blob) {
            var tag = Base64URL.decode($0["tag"] as! String)!
            tag[0] ^= 1
            $0["tag"] = Base64URL.encode(tag)
        }
        await #expect { try await TestSupport.pair().1.open(flipped, vaultID: "v", keys: [key]) } throws: {
            VaultEnvelopeError.Code.ciphertextAltered.matches($0)
        }
        await #expect {
            try await TestSupport.pair().1.open(blob, vaultID: "v", keys: [SelfECDHKEK(privateKey: P256.KeyAgreement.PrivateKey())])
        } throws: {
            VaultEnvelopeError.Code.noMatchingKey.matches($0)
        }
    }

    @Test func firstRewriteOfASeedVaultRotatesIntoTheExtendedForm() async throws {
        let kekPriv = try P256.KeyAgreement.PrivateKey()
        let key = SelfECDHKEK(privateKey: kekPriv)
        let (blob, plaintext) = try Self.iOSSeedBlob(kekPriv: kekPriv)
        let (sealer, opener) = TestSupport.pair()
        let opened = try await opener.open(blob, vaultID: "v", keys: [key])
        // The seed's key needs its holder (Face ID on iOS), so an unattended upgrade has nobody left to wrap for.
        await #expect { try await sealer.seal(plaintext, over: opened.state, keys: [key]) } throws: {
            VaultEnvelopeError.Code.noRecipients.matches($0)
        }
        let upgraded = try await sealer.seal(plaintext, over: opened.state, keys: [key], allowingPrompts: true)
        #expect(upgraded.rotation == DEKRotation(rewrapped: [key.kekID], skipped: []))
        #expect(upgraded.state.envelope.entries.first?.algorithm == .selfECDH)
        #expect(upgraded.state.envelope.entries.first?.label == "iPhone 15 Pro")
        let reopened = try await opener.open(upgraded.blob, vaultID: "v", keys: [key])
        #expect(reopened.plaintext == plaintext && reopened.state.envelope.form == .extended)
        // Once the anchored form was accepted (through the self-ECDH entry, which proves its writer), the seed-form
        // original is a downgrade.
        #expect(try await opener.open(upgraded.blob, vaultID: "v", keys: [key]).state.identity != nil)
        await #expect { try await opener.open(blob, vaultID: "v", keys: [key]) } throws: {
            VaultEnvelopeError.Code.downgrade.matches($0)
        }
    }
}
