import Foundation
import Testing
import VaultCore
import VaultCrypto

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
        #expect(try await opener.open(blob, vaultID: "v", keys: [key]).plaintext == TestSupport.plaintext)
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

@Suite struct PassphraseWithoutArgon2idTests {
    /// An Apple app that supplies no Argon2id: a passphrase entry fails with a named error, every other key still works.
    @Test func aPassphraseWithoutAnArgon2idImplementationIsAClearError() async throws {
        #expect { try PassphraseKEK(passphrase: "correct horse battery", argon2id: nil) } throws: {
            VaultEnvelopeError.Code.unsupportedAlgorithm.matches($0)
        }
        let code = RecoveryCode.generate()
        let (sealer, opener) = TestSupport.pair()
        let key = try RecoveryCodeKEK(code: code)
        let blob = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "code")]).blob
        let envelope = try VaultEnvelope(parsing: blob)
        #expect { try PassphraseKEK.unlock(passphrase: "x", in: envelope, argon2id: nil) } throws: {
            VaultEnvelopeError.Code.noMatchingKey.matches($0)
        }
        #expect(try await opener.open(blob, vaultID: "v", keys: [key]).plaintext == TestSupport.plaintext)
    }

    /// The app's implementation is what derives: one that is not Argon2id gives another key, so nothing opens.
    @Test func theSuppliedImplementationIsTheOneUsed() throws {
        struct Counting: Argon2idDeriving {
            func deriveKey(password: Data, salt: Data, iterations: Int, memoryKiB: Int, parallelism: Int, outputByteCount: Int) throws
                -> SymmetricKey
            {
                SymmetricKey(data: Data(repeating: 7, count: outputByteCount))
            }
        }
        let real = try PassphraseKEK(passphrase: "correct horse battery")
        let fake = try PassphraseKEK(passphrase: "correct horse battery", argon2id: Counting())
        #expect(real.kekID != fake.kekID)
    }
}
