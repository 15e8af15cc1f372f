import Foundation
import Testing
import VaultCrypto

@testable import VaultEnvelope

@Suite struct StorageTests {
    @Test func keyFilesReadableByOthersAreRefused() throws {
        let url = try TestSupport.scratchDirectory().appendingPathComponent("kek")
        _ = try SymmetricKEK.create(at: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        #expect { try SymmetricKEK(contentsOf: url) } throws: { VaultEnvelopeError.Code.keyStorage.matches($0) }
        #expect { try SymmetricKEK.create(at: url) } throws: { VaultEnvelopeError.Code.keyStorage.matches($0) }
    }

    @Test func aDestroyedOrReplacedKeyIsInvalidated() async throws {
        let directory = try TestSupport.scratchDirectory()
        let url = directory.appendingPathComponent("kek")
        let key = try SymmetricKEK.create(at: url)
        let (sealer, opener) = TestSupport.pair()
        let blob = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "a")]).blob
        try FileManager.default.removeItem(at: url)
        await #expect { try await opener.open(blob, vaultID: "v", keys: [key]) } throws: {
            VaultEnvelopeError.Code.invalidated.matches($0)
        }
        _ = try SymmetricKEK.create(at: url)
        await #expect { try await key.wrap(SymmetricKey(size: .bits256)) } throws: {
            VaultEnvelopeError.Code.invalidated.matches($0)
        }
    }

    @Test func fileCounterStoreSurvivesARestartAndNeverGoesDown() async throws {
        let url = try TestSupport.scratchDirectory().appendingPathComponent("counters.json")
        let store = try FileCounterStore(fileURL: url)
        try await store.advance("a", to: 5)
        try await store.advance("a", to: 3)
        try await store.advance("b", to: 1)
        let reopened = try FileCounterStore(fileURL: url)
        #expect(await reopened.highestCounter(for: "a") == 5)
        #expect(await reopened.highestCounter(for: "b") == 1)
        #expect(await reopened.highestCounter(for: "c") == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        try Data("[1]".utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        #expect { try FileCounterStore(fileURL: url) } throws: { VaultEnvelopeError.Code.keyStorage.matches($0) }
    }

    @Test func rollbackIsRefusedAcrossRestarts() async throws {
        let url = try TestSupport.scratchDirectory().appendingPathComponent("counters.json")
        let key = try DeviceKEK.generate()
        let sealer = VaultSealer(counterStore: try FileCounterStore(fileURL: url), clock: TestSupport.clock())
        let first = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "a")])
        try await sealer.markAccepted(first)
        let second = try await sealer.seal(TestSupport.plaintext, over: first.state)
        _ = try await VaultOpener(counterStore: try FileCounterStore(fileURL: url)).open(second.blob, vaultID: "v", keys: [key])
        let afterRestart = VaultOpener(counterStore: try FileCounterStore(fileURL: url))
        await #expect { try await afterRestart.open(first.blob, vaultID: "v", keys: [key]) } throws: {
            VaultEnvelopeError.Code.rollback.matches($0)
        }
    }
}
