import Foundation
import Testing
import VaultCore
import VaultCrypto

@testable import VaultEnvelope

/// Every change a server could make to a stored blob fails, each with its own code.
@Suite struct TamperTests {
    let phone: DeviceKEK
    let laptop: AESGCMKEK
    let sealer: VaultSealer
    let opener: VaultOpener
    let blob: Data

    init() async throws {
        phone = try DeviceKEK.generate()
        laptop = AESGCMKEK(key: SymmetricKey(size: .bits256))
        (sealer, opener) = TestSupport.pair(hint: "iPhone 15 Pro")
        let created = try await sealer.create(
            TestSupport.plaintext, vaultID: "v", recipients: [.init(phone, label: "Phone"), .init(laptop, label: "Laptop")])
        try await sealer.markAccepted(created)
        blob = created.blob
    }

    private func expectOpenFails(_ code: VaultEnvelopeError.Code, _ tampered: Data, keys: [any KeyEncryptionKey]? = nil) async {
        await #expect { try await opener.open(tampered, vaultID: "v", keys: keys ?? [phone]) } throws: { code.matches($0) }
    }

    @Test func untouchedBlobRewrittenByAnotherJSONEncoderStillOpens() async throws {
        // Member order, escaping and whitespace are not authenticated, only parsed values.
        let rewritten = try TestSupport.edit(blob) { _ in }
        #expect(rewritten != blob)
        #expect(try await opener.open(rewritten, vaultID: "v", keys: [phone]).plaintext == TestSupport.plaintext)
    }

    @Test func droppedRecipient() async throws {
        await expectOpenFails(.recipientsAltered, try TestSupport.edit(blob) { $0["wrappedDeks"] = [TestSupport.entries($0)[0]] })
    }

    @Test func swappedRecipientOrder() async throws {
        await expectOpenFails(
            .recipientsAltered, try TestSupport.edit(blob) { $0["wrappedDeks"] = Array(TestSupport.entries($0).reversed()) })
    }

    @Test func editedRecipientLabel() async throws {
        await expectOpenFails(
            .recipientsAltered,
            try TestSupport.edit(blob) {
                var entries = TestSupport.entries($0)
                entries[1]["label"] = "Attacker"
                $0["wrappedDeks"] = entries
            })
    }

    @Test func swappedHint() async throws {
        await expectOpenFails(.hintAltered, try TestSupport.edit(blob) { $0["hint"] = "Pixel 8" })
        await expectOpenFails(.hintAltered, try TestSupport.edit(blob) { $0["hint"] = nil })
    }

    @Test func editedUpdatedUtc() async throws {
        await expectOpenFails(.timestampAltered, try TestSupport.edit(blob) { $0["updatedUtc"] = "2030-01-01T00:00:00.000Z" })
    }

    @Test func editedCounter() async throws {
        await expectOpenFails(.counterAltered, try TestSupport.edit(blob) { $0["counter"] = 99 })
        await expectOpenFails(.counterAltered, try TestSupport.edit(blob) { $0["dek_seals"] = 7 })
    }

    @Test func olderCounterIsARollback() async throws {
        let first = try await opener.open(blob, vaultID: "v", keys: [phone])
        let second = try await sealer.seal(first.plaintext, over: first.state)
        _ = try await opener.open(second.blob, vaultID: "v", keys: [phone])
        // Re-reading the accepted version is fine; going back is not.
        _ = try await opener.open(second.blob, vaultID: "v", keys: [phone])
        await expectOpenFails(.rollback, blob)
        // The counter is checked before any key is asked, so the error is the same with no usable key.
        await expectOpenFails(.rollback, blob, keys: [])
        // Other vaults keep their own counters (read through the symmetric entry, which pins without confirmation).
        #expect(try await opener.open(blob, vaultID: "other", keys: [laptop]).plaintext == TestSupport.plaintext)
    }

    @Test func strippingTheCounterToLookLikeTheSeedIsRefused() async throws {
        _ = try await opener.open(blob, vaultID: "v", keys: [phone])
        let stripped = try TestSupport.edit(blob) {
            $0["counter"] = nil
            $0["dek_seals"] = nil
            $0["macs"] = nil
        }
        // The identity members come only with the extended form (FORMAT.md §11.1): refused as it is parsed.
        await expectOpenFails(.malformed, stripped)
        // Stripped of them too, the pinned anchor refuses it before the counter is looked at: no vault identity.
        let seedLike = try TestSupport.edit(stripped) {
            for member in ["vault_id", "epoch", "vault_secret", "previous"] { $0[member] = nil }
        }
        await expectOpenFails(.downgrade, seedLike)
        // A reader that never saw the vault still fails: the entries and ciphertext are not the seed's.
        await #expect(throws: VaultEnvelopeError.self) {
            try await TestSupport.pair().1.open(stripped, vaultID: "v", keys: [phone, laptop])
        }
    }

    @Test func flippedCiphertextBit() async throws {
        await expectOpenFails(
            .ciphertextAltered,
            try TestSupport.edit(blob) {
                var cipher = Base64URL.decode($0["cipher"] as! String)!
                cipher[cipher.count / 2] ^= 0x10
                $0["cipher"] = Base64URL.encode(cipher)
            })
        await expectOpenFails(
            .ciphertextAltered,
            try TestSupport.edit(blob) {
                var iv = Base64URL.decode($0["iv"] as! String)!
                iv[0] ^= 1
                $0["iv"] = Base64URL.encode(iv)
            })
    }

    @Test func wrongKEK() async throws {
        // A key with no entry.
        await expectOpenFails(.noMatchingKey, blob, keys: [try DeviceKEK.generate()])
        // A different key that claims an entry's kek_id.
        let impostor = AESGCMKEK(key: SymmetricKey(size: .bits256), kekID: laptop.kekID)
        await expectOpenFails(.unwrapFailed, blob, keys: [impostor])
    }

    @Test func extendedFormIsStrict() async throws {
        await expectOpenFails(.malformed, try TestSupport.edit(blob) { $0["extra"] = "x" })
        await expectOpenFails(
            .unsupportedAlgorithm,
            try TestSupport.edit(blob) {
                var entries = TestSupport.entries($0)
                entries[0]["alg"] = "dir"
                $0["wrappedDeks"] = entries
            })
        await expectOpenFails(
            .malformed,
            try TestSupport.edit(blob) {
                var entries = TestSupport.entries($0)
                entries[0]["d"] = "AAAA"
                $0["wrappedDeks"] = entries
            })
        await expectOpenFails(.invalidShape, try TestSupport.edit(blob) { $0["iv"] = "AAAA" })
        await expectOpenFails(.invalidJSON, Data(#"{"v":1,"v":1}"#.utf8))
    }
}
