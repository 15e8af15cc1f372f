import Foundation
import Synchronization
import Testing
import VaultCrypto

@testable import VaultEnvelope

/// `SymmetricKEK` over a key source that asks its holder (a Keychain item behind biometry on iOS), played by a fake.
@Suite struct StoredKeySourceTests {
    final class PromptingSource: StoredKeySource {
        let answer: Mutex<Result<SymmetricKey, VaultEnvelopeError>>
        init(_ key: SymmetricKey) { answer = Mutex(.success(key)) }
        var requiresHolder: Bool { true }
        func loadKey() throws(VaultEnvelopeError) -> SymmetricKey { try answer.withLock { $0 }.get() }
        func set(_ result: Result<SymmetricKey, VaultEnvelopeError>) { answer.withLock { $0 = result } }
    }

    @Test func aKeyThatAsksItsHolderWrapsOpensAndReportsEachRefusal() async throws {
        let key = SymmetricKey(size: .bits256)
        let source = PromptingSource(key)
        let kek = SymmetricKEK(source: source, kekID: SymmetricKEK.kekID(of: key))
        #expect(!kek.canWrapWithoutHolder, "rotations leave a prompting key to its holder")
        let (sealer, opener) = TestSupport.pair()
        let blob = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(kek, label: "Keychain")]).blob
        #expect(try await opener.open(blob, vaultID: "v", keys: [kek]).plaintext == TestSupport.plaintext)

        source.set(.failure(VaultEnvelopeError(.userCanceled, "cancelled")))
        await #expect { try await opener.open(blob, vaultID: "v", keys: [kek]) } throws: {
            VaultEnvelopeError.Code.userCanceled.matches($0)
        }
        source.set(.failure(VaultEnvelopeError(.invalidated, "biometry changed")))
        await #expect { try await opener.open(blob, vaultID: "v", keys: [kek]) } throws: { VaultEnvelopeError.Code.invalidated.matches($0) }
        source.set(.success(SymmetricKey(size: .bits256)))
        await #expect { try await opener.open(blob, vaultID: "v", keys: [kek]) } throws: { VaultEnvelopeError.Code.invalidated.matches($0) }
    }
}
