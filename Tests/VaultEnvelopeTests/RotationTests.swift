import Foundation
import Testing
import VaultCore
import VaultCrypto

@testable import VaultEnvelope

@Suite struct RotationTests {
    @Test func everySealUsesAFreshIVAndCountsItsSeals() async throws {
        let (sealer, opener) = TestSupport.pair()
        let key = try DeviceKEK.generate()
        var sealed = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "a")])
        try await sealer.markAccepted(sealed)
        var ivs: Set<Data> = []
        for expected in 1...5 as ClosedRange<UInt64> {
            #expect(sealed.state.dekSeals == expected && sealed.state.counter == expected)
            ivs.insert(sealed.state.envelope.sealedBox.nonce.withUnsafeBytes { Data($0) })
            let opened = try await opener.open(sealed.blob, vaultID: "v", keys: [key])
            sealed = try await sealer.seal(opened.plaintext, over: opened.state)
        }
        #expect(ivs.count == 5)
    }

    @Test func dekRotatesAtTheThresholdAndReportsWhatItCouldNotRewrap() async throws {
        let directory = try TestSupport.scratchDirectory()
        let (sealer, opener) = TestSupport.pair(threshold: 2)
        let device = try DeviceKEK.generate()
        let otherDevice = try DeviceKEK.generate()
        let recovery = try RecoveryCodeKEK(code: .generate())
        let fileKey = try SymmetricKEK.create(at: directory.appendingPathComponent("gone"))
        let android = AESGCMKEK(key: SymmetricKey(size: .bits256))
        let passphrase = try PassphraseKEK(passphrase: "pw", costs: TestSupport.fastCosts)
        let created = try await sealer.create(
            TestSupport.plaintext, vaultID: "v",
            recipients: [
                .init(device, label: "this"), .init(otherDevice.recipient, label: "other"), .init(recovery, label: "recovery"),
                .init(fileKey, label: "file"), .init(android, label: "android"), .init(passphrase, label: "passphrase"),
            ])
        try await sealer.markAccepted(created)
        let second = try await sealer.seal(TestSupport.plaintext, over: created.state)
        #expect(second.rotation == nil && second.state.dekSeals == 2)

        try FileManager.default.removeItem(at: try #require(fileKey.fileURL))
        let keys: [any KeyWrapping] = [device, recovery, fileKey, android]
        let third = try await sealer.seal(TestSupport.plaintext, over: second.state, keys: keys)
        let rotation = try #require(third.rotation)
        #expect(third.state.dekSeals == 1 && third.state.counter == 3)
        #expect(rotation.rewrapped == [device.kekID, otherDevice.kekID, recovery.kekID])
        #expect(
            rotation.skipped == [
                .init(kekID: fileKey.kekID, label: "file", reason: .failed(.invalidated)),
                .init(kekID: android.kekID, label: "android", reason: .needsHolder),
                .init(kekID: passphrase.kekID, label: "passphrase", reason: .keyNotAvailable),
            ])
        // Labels and enrollment times survive; the DEK does not.
        #expect(third.state.envelope.entries.map(\.label) == ["this", "other", "recovery"])
        #expect(third.state.envelope.entries[0].created == created.state.envelope.entries[0].created)
        #expect(third.state.dek != second.state.dek)
        for key in [device, otherDevice, recovery] as [any KeyEncryptionKey] {
            #expect(try await opener.open(third.blob, vaultID: "v", keys: [key]).plaintext == TestSupport.plaintext)
        }
        await #expect { try await opener.open(third.blob, vaultID: "v", keys: [android, passphrase]) } throws: {
            VaultEnvelopeError.Code.noMatchingKey.matches($0)
        }
    }

    @Test func explicitRotationWithPromptsKeepsHolderKeys() async throws {
        let (sealer, opener) = TestSupport.pair()
        let android = AESGCMKEK(key: SymmetricKey(size: .bits256))
        let created = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(android, label: "a")])
        let rotated = try await sealer.rotateDEK(TestSupport.plaintext, over: created.state, keys: [android], allowingPrompts: true)
        #expect(rotated.rotation?.skipped == [])
        #expect(try await opener.open(rotated.blob, vaultID: "v", keys: [android]).plaintext == TestSupport.plaintext)
    }

    @Test func sealRefusesABlobLargerThanTheServerLimit() async throws {
        let (sealer, _) = TestSupport.pair(maxBlobBytes: 4096)
        let key = try DeviceKEK.generate()
        await #expect { try await sealer.create(Data(count: 4096), vaultID: "v", recipients: [.init(key, label: "a")]) } throws: { error in
            guard let error = error as? VaultEnvelopeError, error.code == .blobTooLarge else { return false }
            // Both numbers, the blob's size and the limit, are in the reason.
            return error.reason.contains("4096") && error.reason.range(of: #"would be \d{4,} bytes"#, options: .regularExpression) != nil
        }
        _ = try await sealer.create(Data(count: 1024), vaultID: "v", recipients: [.init(key, label: "a")])
    }

    @Test func markAcceptedMakesTheSealersOwnVersionTheFloor() async throws {
        let store = InMemoryCounterStore()
        let sealer = VaultSealer(counterStore: store, clock: TestSupport.clock())
        let opener = VaultOpener(counterStore: store)
        // A symmetric entry: it proves its writer, so the first open needs no pinned anchor.
        let key = AESGCMKEK(key: SymmetricKey(size: .bits256))
        let first = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "a")])
        let second = try await sealer.seal(TestSupport.plaintext, over: first.state)
        // Not yet accepted by the server: the first version may still be what the server holds.
        _ = try await opener.open(first.blob, vaultID: "v", keys: [key])
        try await sealer.markAccepted(second)
        await #expect { try await opener.open(first.blob, vaultID: "v", keys: [key]) } throws: {
            VaultEnvelopeError.Code.rollback.matches($0)
        }
    }
}
