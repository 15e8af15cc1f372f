import Foundation
import Synchronization
import Testing
import VaultCore
import VaultCrypto
import VaultEnvelope
import VaultTestSupport
import WalletVault

/// The seed's iOS key through `PlatformDeviceKeyStore`, and every §7 failure of it, on this platform.
@Suite("The platform device key: self-ECDH entry, pairing, invalidation, cancellation")
struct PlatformKeyTests {
    /// A (a Linux-style device) creates the vault with a recovery code; the phone pairs with its platform key.
    func pairedPhone() async throws -> (SimulatedDevice, SimulatedDevice, FakeKeychain, RecoveryCode) {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let code = RecoveryCode.generate()
        let keychain = FakeKeychain()
        let a = try SimulatedDevice(server: server, user: user, label: "Laptop")
        let phone = try SimulatedDevice(server: server, user: user, label: "iPhone", keychain: keychain)
        _ = try await a.engine.createVault(recoveryPaths: [(try RecoveryCodeKEK(code: code), "recovery code")])
        try await a.set("passport", "P1")
        _ = try await a.engine.sync()
        _ = try await a.engine.pairAndConfirm(phone.engine)
        return (a, phone, keychain, code)
    }

    @Test func aPairedPhoneReplacesItsPairingEntryWithTheSeedsSelfECDHEntry() async throws {
        let (a, phone, _, _) = try await pairedPhone()
        #expect(try await phone.values() == ["passport": .string("P1")])
        let entries = try await phone.engine.devices()
        let own = try #require(entries.first { $0.isThisDevice })
        #expect(own.algorithm == "WV-ECDH-SELF+A256GCMKW")
        #expect(Base64URL.decode(own.kekID)?.count == 64, "the seed's kek_id: the raw public key")
        #expect(entries.filter(\.isThisDevice).count == 1, "the pairing entry was replaced")
        // The phone's entry needs its holder to wrap, so another device's rotation reports it rather than re-wrapping.
        try await phone.set("licence", "L1")
        _ = try await phone.engine.sync()
        _ = try await a.engine.sync()
        #expect(try await a.values()["licence"] == .string("L1"))
    }

    @Test func aPhoneThatCreatesTheVaultWritesTheSelfECDHEntry() async throws {
        let server = try InProcessServer()
        let phone = try SimulatedDevice(server: server, user: UUID().uuidString, label: "iPhone", keychain: FakeKeychain())
        _ = try await phone.engine.createVault()
        try await phone.set("passport", "P1")
        _ = try await phone.engine.sync()
        #expect(try await phone.engine.devices().map(\.algorithm) == ["WV-ECDH-SELF+A256GCMKW"])
    }

    @Test func biometryChangedInvalidatesTheKeyAndTheRecoveryCodeRestoresTheDevice() async throws {
        let (a, phone, keychain, code) = try await pairedPhone()
        try await a.set("licence", "L1")
        _ = try await a.engine.sync()
        keychain.failInUse(with: .invalidated("biometry changed"))
        await requireError(.keyInvalidated) { _ = try await phone.engine.sync() }
        #expect(try await phone.values() == ["passport": .string("P1")], "nothing changed locally")
        let dead = try #require(try await phone.engine.devices().first { $0.isThisDevice }?.kekID)
        keychain.failInUse(with: nil)
        _ = try await phone.engine.recover(with: try RecoveryCodeKEK(code: code))
        #expect(try await phone.values()["licence"] == .string("L1"))
        let entries = try await phone.engine.devices()
        #expect(!entries.contains { $0.kekID == dead }, "the dead entry is dropped")
        #expect(entries.first { $0.isThisDevice }?.algorithm == "WV-ECDH-SELF+A256GCMKW")
    }

    @Test func restoredOntoAnotherPhoneTheMissingKeyIsInvalidatedNotAbsent() async throws {
        let (_, phone, keychain, code) = try await pairedPhone()
        keychain.dropItem()
        await requireError(.keyInvalidated) { _ = try await phone.engine.sync() }
        _ = try await phone.engine.recover(with: try RecoveryCodeKEK(code: code))
        #expect(try await phone.values() == ["passport": .string("P1")])
        _ = try await phone.engine.sync()
    }

    @Test func aCancelledPromptChangesNothingAndOffersNoRecovery() async throws {
        let (a, phone, keychain, _) = try await pairedPhone()
        try await a.set("licence", "L1")
        _ = try await a.engine.sync()
        let before = await phone.engine.status()
        keychain.failInUse(with: .canceled)
        await requireError(.authenticationCanceled) { _ = try await phone.engine.sync() }
        #expect(await phone.engine.status() == before)
        keychain.failInUse(with: nil)
        guard case .restored = try await phone.engine.sync() else {
            Issue.record("the next sync should restore")
            return
        }
        #expect(try await phone.values()["licence"] == .string("L1"))
    }
}
