import Foundation
import Testing
import VaultCore
@testable import VaultEnvelope

@Suite struct PassphraseTests {
    let sealer: VaultSealer
    let opener: VaultOpener
    let blob: Data

    init() async throws {
        (sealer, opener) = TestSupport.pair()
        let key = try PassphraseKEK(passphrase: "hunter2 hunter2", costs: TestSupport.fastCosts)
        blob = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "Passphrase")]).blob
    }

    @Test func aNewDeviceUnlocksWithThePassphraseAlone() async throws {
        let envelope = try VaultEnvelope(parsing: blob)
        let key = try PassphraseKEK.unlock(passphrase: "hunter2 hunter2", in: envelope)
        #expect(try await opener.open(envelope, vaultID: "v", keys: [key]).plaintext == TestSupport.plaintext)
        #expect(throws: VaultEnvelopeError.self) { try PassphraseKEK.unlock(passphrase: "hunter3", in: envelope) }
    }

    @Test func costsBelowTheFloorOrAboveTheCeilingAreRefused() throws {
        for (m, t) in [(8192, 2), (19456, 1), (2_000_000, 2)] {
            let weakened = try TestSupport.edit(blob) {
                var entries = TestSupport.entries($0)
                entries[0]["m"] = m
                entries[0]["t"] = t
                $0["wrappedDeks"] = entries
            }
            #expect { try PassphraseKEK.unlock(passphrase: "hunter2 hunter2", in: VaultEnvelope(parsing: weakened)) } throws: {
                VaultEnvelopeError.Code.weakParameters.matches($0)
            }
        }
        #expect { try PassphraseKEK(passphrase: "x", costs: Argon2idCosts(memoryKiB: 4096, iterations: 1, parallelism: 1)) } throws: {
            VaultEnvelopeError.Code.weakParameters.matches($0)
        }
    }

    @Test func defaultCostsAreAboveTheFloor() {
        #expect(Argon2idCosts.default.isWithinReaderLimits)
        #expect(Argon2idCosts.default.memoryKiB >= Argon2idCosts.floor.memoryKiB)
        #expect(Argon2idCosts.floor.memoryKiB >= 19 * 1024 && Argon2idCosts.floor.iterations >= 2)
    }
}
