import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultJSON

@testable import VaultEnvelope

/// A writer never produces what readers refuse, and a reader refuses oversized texts before parsing them.
@Suite struct WriterLimitsTests {
    @Test func aWriterRefusesPassphraseEntriesNoReaderWouldDeriveAndLabelsOverTheCodePointLimit() async throws {
        let (sealer, _) = TestSupport.pair()
        var recipients: [VaultSealer.Recipient] = []
        for index in 0..<5 { recipients.append(.init(try PassphraseKEK(passphrase: "p\(index)", costs: .floor), label: "p\(index)")) }
        await #expect { try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: recipients) } throws: {
            VaultEnvelopeError.Code.workLimitExceeded.matches($0)
        }
        // 200 characters but 400 code points (e + combining acute).
        let key = AESGCMKEK(key: SymmetricKey(size: .bits256))
        await #expect {
            try await sealer.create(
                TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: String(repeating: "e\u{301}", count: 200))])
        } throws: { VaultEnvelopeError.Code.malformed.matches($0) }
    }

    @Test func rotatingASeedVaultWhoseEntriesShareAKEKIDRewrapsOnceAndReportsTheOthers() async throws {
        let directory = FormatVectorTests.directory
        let description = try JSONParser().parse(
            try Data(contentsOf: directory.appendingPathComponent("seed-android-shared-kek-id.key.json")))
        let key = try FormatVectorTests.key(from: description, scratch: try TestSupport.scratchDirectory())
        let blob = try Data(contentsOf: directory.appendingPathComponent("seed-android-shared-kek-id.blob.json"))
        let (sealer, opener) = TestSupport.pair()
        let opened = try await opener.open(blob, vaultID: "v", keys: [key])
        let shared = opened.state.entries.filter { $0.kekID == key.kekID }.count
        #expect(shared >= 2)
        let upgraded = try await sealer.seal(opened.plaintext, over: opened.state, keys: [key], allowingPrompts: true)
        #expect(upgraded.state.entries.filter { $0.kekID == key.kekID }.count == 1)
        #expect(upgraded.rotation?.skipped.filter { $0.kekID == key.kekID && $0.reason == .keyNotAvailable }.count == shared - 1)
        #expect(try await opener.open(upgraded.blob, vaultID: "v", keys: [key]).plaintext == opened.plaintext)
    }

    @Test func aReaderRefusesATextOverItsLimitBeforeParsingIt() async throws {
        let key = AESGCMKEK(key: SymmetricKey(size: .bits256))
        let blob = try await TestSupport.pair().0.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "k")]).blob
        #expect { try VaultEnvelope(parsing: blob, maxBytes: blob.count - 1) } throws: { VaultEnvelopeError.Code.blobTooLarge.matches($0) }
        // Not even JSON: refused for its size, not its syntax.
        #expect { try VaultEnvelope(parsing: Data(repeating: 0x7B, count: 2_000_000)) } throws: {
            VaultEnvelopeError.Code.blobTooLarge.matches($0)
        }
        let opener = VaultOpener(counterStore: InMemoryCounterStore(), maxBlobBytes: blob.count - 1)
        await #expect { try await opener.open(blob, vaultID: "v", keys: [key]) } throws: {
            VaultEnvelopeError.Code.blobTooLarge.matches($0)
        }
        #expect(
            try await VaultOpener(counterStore: InMemoryCounterStore(), maxBlobBytes: blob.count).open(blob, vaultID: "v", keys: [key])
                .plaintext == TestSupport.plaintext)
    }
}
