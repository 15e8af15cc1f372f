import Foundation
import Testing
import VaultCore
import VaultCrypto
@_spi(Engines) import VaultJSON

@testable import VaultEnvelope

@Suite struct ProviderRoundTripTests {
    /// Seals for one key, opens with it, and checks the entry names the key's algorithm and id.
    private func roundTrip(_ key: any KeyEncryptionKey, label: String = "key") async throws -> WrappedKey {
        let (sealer, opener) = TestSupport.pair()
        let sealed = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: label)])
        // As after the upload: the creating device pins the vault it drew the secret for.
        try await sealer.markAccepted(sealed)
        let opened = try await opener.open(sealed.blob, vaultID: "v", keys: [key])
        #expect(opened.plaintext == TestSupport.plaintext)
        #if canImport(CYajl)
            // Written last, `cipher` is read without the JSON parser scanning it (the fast path exists where simdjson does).
            let cut = try #require(JSONParser().parseCuttingTrailingString(sealed.blob, member: "cipher"))
            #expect(cut.decoded == opened.state.envelope.sealedBox.ciphertext)
        #endif
        let entry = try #require(opened.state.envelope.entries.first)
        #expect(entry.algorithm == key.algorithm)
        #expect(entry.kekID == key.kekID)
        #expect(entry.label == label)
        #expect(opened.state.envelope.form == .extended)
        return entry
    }

    @Test func symmetricFileKey() async throws {
        let directory = try TestSupport.scratchDirectory()
        let url = directory.appendingPathComponent("kek.key")
        let key = try SymmetricKEK.create(at: url)
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let entry = try await roundTrip(key)
        #expect(entry.scheme == .a256kw(.stored))
        // A symmetric entry of an anchored vault wraps the 56-byte bound payload (FORMAT.md §11.9): 64 bytes of RFC 3394.
        #expect(entry.encryptedKey.count == 64)
        // Reopened from its file, the key has the same id and still opens the vault.
        #expect(try SymmetricKEK(contentsOf: url).kekID == key.kekID)
        #expect(key.kekID.count == 22)
    }

    @Test func deviceKeyPair() async throws {
        let key = try DeviceKEK.generate()
        let entry = try await roundTrip(key)
        guard case .ecdhESA256KW(_, let recipient) = entry.scheme else {
            Issue.record("scheme \(entry.scheme)")
            return
        }
        #expect(recipient == PublicJWK(key.privateKey.publicKey))
        #expect(key.kekID == recipient.thumbprint)
    }

    @Test func rsaKeyPair() async throws {
        let key = RSAKEK(privateKey: try RSA.Encryption.PrivateKey(keySize: 2048))
        let entry = try await roundTrip(key)
        #expect(entry.encryptedKey.count == 256)
    }

    @Test func recoveryCode() async throws {
        let code = RecoveryCode.generate()
        let entry = try await roundTrip(try RecoveryCodeKEK(code: code), label: "Recovery code")
        #expect(entry.scheme == .a256kw(.recoveryCode))
        // The code as the user types it back, in lower case with spaces, reproduces the key.
        let typed = code.formatted.lowercased().replacingOccurrences(of: "-", with: " ")
        #expect(try RecoveryCodeKEK(code: RecoveryCode(parsing: typed)).kekID == entry.kekID)
    }

    @Test func passphrase() async throws {
        let key = try PassphraseKEK(passphrase: "correct horse battery staple", costs: TestSupport.fastCosts)
        let entry = try await roundTrip(key)
        #expect(entry.scheme == .a256kw(.passphrase(salt: key.salt, costs: TestSupport.fastCosts)))
    }

    @Test func seedSelfECDH() async throws {
        let key = SelfECDHKEK(privateKey: try P256.KeyAgreement.PrivateKey())
        let entry = try await roundTrip(key)
        #expect(entry.encryptedKey.count == 12 + 56 + 16)  // IV ‖ the bound payload's ciphertext ‖ tag
        #expect(Base64URL.decode(key.kekID) == key.privateKey.publicKey.rawRepresentation)
    }

    @Test func androidStyleGCM() async throws {
        let entry = try await roundTrip(AESGCMKEK(key: SymmetricKey(size: .bits256)))
        guard case .a256gcmkw(let iv, let tag) = entry.scheme else {
            Issue.record("scheme \(entry.scheme)")
            return
        }
        #expect(iv.count == 12 && tag.count == 16 && entry.encryptedKey.count == 56)  // the bound payload
    }

    @Test func oneBlobForEveryProviderOpensWithEach() async throws {
        let directory = try TestSupport.scratchDirectory()
        let keys: [any KeyEncryptionKey] = [
            try SymmetricKEK.create(at: directory.appendingPathComponent("k")),
            try DeviceKEK.generate(),
            RSAKEK(privateKey: try RSA.Encryption.PrivateKey(keySize: 2048)),
            try RecoveryCodeKEK(code: .generate()),
            try PassphraseKEK(passphrase: "pw", costs: TestSupport.fastCosts),
            SelfECDHKEK(privateKey: try P256.KeyAgreement.PrivateKey()),
            AESGCMKEK(key: SymmetricKey(size: .bits256)),
        ]
        let (sealer, opener) = TestSupport.pair()
        let sealed = try await sealer.create(
            TestSupport.plaintext, vaultID: "v", recipients: keys.enumerated().map { .init($1, label: "key \($0)") })
        for key in keys {
            #expect(try await opener.open(sealed.blob, vaultID: "v", keys: [key]).plaintext == TestSupport.plaintext)
        }
        #expect(Set(sealed.state.envelope.entries.compactMap(\.algorithm)) == Set(KeyWrapAlgorithm.allCases))
    }

    @Test func enrollingAnotherDeviceNeedsOnlyItsPublicKey() async throws {
        let (sealer, opener) = TestSupport.pair()
        let first = try DeviceKEK.generate()
        let second = try DeviceKEK.generate()
        let created = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(first, label: "Phone")])
        try await sealer.markAccepted(created)
        let opened = try await opener.open(created.blob, vaultID: "v", keys: [first])
        let enrolled = try await sealer.enroll(PublicKeyRecipient(second.privateKey.publicKey), label: "Tablet", in: opened.state)
        let resealed = try await sealer.seal(opened.plaintext, over: enrolled)
        #expect(try await opener.open(resealed.blob, vaultID: "v", keys: [second]).plaintext == TestSupport.plaintext)
        #expect(resealed.state.envelope.entries.map(\.label) == ["Phone", "Tablet"])
        await #expect { try await sealer.enroll(second.recipient, label: "again", in: resealed.state) } throws: {
            VaultEnvelopeError.Code.noRecipients.matches($0)
        }
    }

    @Test func revokedEntryIsGoneFromTheNextVersion() async throws {
        let (sealer, opener) = TestSupport.pair()
        let keep = try DeviceKEK.generate()
        let drop = try DeviceKEK.generate()
        let created = try await sealer.create(
            TestSupport.plaintext, vaultID: "v", recipients: [.init(keep, label: "a"), .init(drop, label: "b")])
        let revoked = try sealer.revoke(kekID: drop.kekID, in: created.state)
        let resealed = try await sealer.rotateDEK(TestSupport.plaintext, over: revoked, keys: [])
        await #expect { try await opener.open(resealed.blob, vaultID: "v", keys: [drop]) } throws: {
            VaultEnvelopeError.Code.noMatchingKey.matches($0)
        }
        #expect(throws: VaultEnvelopeError.self) { try sealer.revoke(kekID: keep.kekID, in: resealed.state) }
    }

    @Test func labelsAndHintsReadersWouldRefuseAreNotWritten() async throws {
        let key = try DeviceKEK.generate()
        await #expect {
            try await TestSupport.pair().0.create(
                TestSupport.plaintext, vaultID: "v",
                recipients: [
                    .init(key, label: String(repeating: "x", count: 257))
                ])
        } throws: { VaultEnvelopeError.Code.malformed.matches($0) }
        await #expect {
            try await TestSupport.pair(hint: String(repeating: "h", count: 257)).0.create(
                TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "a")])
        } throws: { VaultEnvelopeError.Code.malformed.matches($0) }
        // The server counts a hint in code points (issue 17): 200 thumbs with a skin tone are 200 grapheme
        // clusters but 400 code points, which the server would refuse, so they are not written either.
        await #expect {
            try await TestSupport.pair(hint: String(repeating: "\u{1F44D}\u{1F3FD}", count: 200)).0.create(
                TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "a")])
        } throws: { VaultEnvelopeError.Code.malformed.matches($0) }
        _ = try await TestSupport.pair(hint: String(repeating: "\u{1F44D}\u{1F3FD}", count: 128)).0.create(
            TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "a")])
    }
}
