import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultEnvelope
import VaultTestSupport
import WalletVault

/// Issue #28 through the platform keychain fake: key death decided from evidence, no key lost to a failed
/// replacement, one prompt per operation at most, and what a background sync can and cannot do.
@Suite("The platform device key behaves as Apple documents")
struct PlatformKeyBehaviourTests {
    /// A laptop creates the vault with a recovery code; the phone pairs with its platform key and has the first item.
    func pairedPhone() async throws -> (SimulatedDevice, SimulatedDevice, FakeKeychain, RecoveryCode) {
        try await PlatformKeyTests().pairedPhone()
    }

    /// The code `body` fails with, by name (so the test reads the same before and after a code is added).
    func failure(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let error as SyncError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    // MARK: - Point 1: key death from evidence

    @Test func aSecureEnclaveRefusalWithTheSameBiometryLeavesTheKeyAlone() async throws {
        let (a, phone, keychain, _) = try await pairedPhone()
        try await a.set("licence", "L1")
        _ = try await a.engine.sync()
        keychain.failInUse(with: .failed("the Secure Enclave refused the key: OSStatus -25293"))
        #expect(await failure { _ = try await phone.engine.sync() } == "localStorage")
        keychain.failInUse(with: nil)
        guard case .restored = try await phone.engine.sync() else {
            Issue.record("the same key should restore once the fault is gone")
            return
        }
    }

    @Test func aChangedBiometrySetIsKeyDeath() async throws {
        let (a, phone, keychain, _) = try await pairedPhone()
        try await a.set("licence", "L1")
        _ = try await a.engine.sync()
        // Apple documents no error for it: the key fails with what the Secure Enclave says; the domain state changed.
        keychain.changeBiometry()
        keychain.failInUse(with: .failed("the Secure Enclave refused the key: CryptoKitError.underlyingCoreCryptoError"))
        #expect(await failure { _ = try await phone.engine.sync() } == "keyInvalidated")
    }

    @Test func noBiometryEnrolledAnyMoreIsKeyDeath() async throws {
        let (a, phone, keychain, _) = try await pairedPhone()
        try await a.set("licence", "L1")
        _ = try await a.engine.sync()
        keychain.removeBiometry()
        keychain.failInUse(with: .unavailable("LAError.biometryNotEnrolled"))
        #expect(await failure { _ = try await phone.engine.sync() } == "keyInvalidated")
    }

    @Test func aLockedDeviceIsNotNowAndChangesNothing() async throws {
        let (a, phone, keychain, _) = try await pairedPhone()
        try await a.set("licence", "L1")
        _ = try await a.engine.sync()
        let before = await phone.engine.status()
        keychain.setLocked(true)
        #expect(await failure { _ = try await phone.engine.sync() } == "notNow")
        #expect(await phone.engine.status() == before)
        #expect(keychain.storedItem != nil)
        keychain.setLocked(false)
        _ = try await phone.engine.sync()
        #expect(try await phone.values()["licence"] == .string("L1"))
    }

    // MARK: - Point 2: the old key stays until the new one is in place

    @Test func aRecoveryThatFailsLeavesTheWorkingKeyInPlace() async throws {
        let (a, phone, keychain, _) = try await pairedPhone()
        let item = keychain.storedItem
        await requireError(.noAccess) { _ = try await phone.engine.recover(with: try RecoveryCodeKEK(code: RecoveryCode.generate())) }
        #expect(keychain.storedItem == item, "a failed recovery must not replace the key")
        try await a.set("licence", "L1")
        _ = try await a.engine.sync()
        _ = try await phone.engine.sync()
        #expect(try await phone.values()["licence"] == .string("L1"))
    }

    @Test func aKeyThatCannotBeCreatedLeavesTheOldOne() async throws {
        let (_, phone, keychain, code) = try await pairedPhone()
        let item = keychain.storedItem
        keychain.failOnCreate(with: .unavailable("OSStatus -25308 (errSecInteractionNotAllowed)"))
        #expect(await failure { _ = try await phone.engine.recover(with: try RecoveryCodeKEK(code: code)) } != nil)
        #expect(keychain.storedItem == item)
        keychain.failOnCreate(with: nil)
        _ = try await phone.engine.sync()
    }

    // MARK: - Points 3 and 8: prompts

    @Test func readingTheKeyAndAnUpToDateSyncPromptNoOne() async throws {
        let (_, phone, keychain, _) = try await pairedPhone()
        let before = keychain.prompts
        _ = try await phone.engine.devices()
        _ = try await phone.engine.keyHealth()
        guard case .upToDate = try await phone.engine.sync() else {
            Issue.record("expected up to date")
            return
        }
        #expect(keychain.prompts == before)
    }

    @Test func pairingConfirmationAsksForFaceIDOnce() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let keychain = FakeKeychain()
        let a = try SimulatedDevice(server: server, user: user, label: "Laptop")
        let phone = try SimulatedDevice(server: server, user: user, label: "iPhone", keychain: keychain)
        _ = try await a.engine.createVault(recoveryPaths: [(try RecoveryCodeKEK(code: RecoveryCode.generate()), "recovery code")])
        let code = try await a.engine.approveAndGetCode(phone.engine)
        #expect(keychain.prompts == 0, "asking for the request prompts no one")
        _ = try await phone.engine.confirmPairing(code: code)
        #expect(keychain.prompts == 1, "confirming (open, restore, enroll the own entry) is one operation: one prompt")
    }

    @Test func eachOperationPromptsAtMostOnce() async throws {
        let (a, phone, keychain, code) = try await pairedPhone()
        var before = keychain.prompts
        try await a.set("licence", "L1")
        _ = try await a.engine.sync()
        _ = try await phone.engine.sync()  // a restore
        #expect(keychain.prompts - before == 1)
        before = keychain.prompts
        try await phone.set("card", "C1")
        _ = try await phone.engine.sync()  // a push
        #expect(keychain.prompts - before == 1)
        before = keychain.prompts
        try await a.set("visa", "V1")
        _ = try await a.engine.sync()
        try await phone.set("ticket", "T1")
        _ = try await phone.engine.sync()  // a merge
        #expect(keychain.prompts - before == 1)
        before = keychain.prompts
        _ = try await phone.engine.recover(with: try RecoveryCodeKEK(code: code))
        #expect(keychain.prompts - before <= 1)
    }

    // MARK: - Point 4: background sync

    @Test func aBackgroundSyncThatNeedsTheKeyEndsNotNowWithNothingChanged() async throws {
        let (a, phone, keychain, _) = try await pairedPhone()
        try await a.set("licence", "L1")
        _ = try await a.engine.sync()
        let before = await phone.engine.status()
        keychain.setInBackground(true)
        // What a BGAppRefreshTask handler runs.
        #expect(await failure { _ = try await PlatformDeviceKeyStore.withoutPrompts { try await phone.engine.sync() } } == "notNow")
        #expect(await phone.engine.status() == before)
        #expect(try await phone.values() == ["passport": .string("P1")])
        #expect(keychain.prompts == 1, "only the pairing's prompt; none attempted in the background")
        try await phone.set("card", "C1")
        #expect(await failure { _ = try await PlatformDeviceKeyStore.withoutPrompts { try await phone.engine.sync() } } == "notNow")
        keychain.setInBackground(false)
        // Even with the app in the foreground, an operation inside withoutPrompts never prompts.
        #expect(await failure { _ = try await PlatformDeviceKeyStore.withoutPrompts { try await phone.engine.sync() } } == "notNow")
        keychain.setInBackground(true)
        #expect(await phone.engine.status().hasLocalEdits, "the edit stays pending")
        keychain.setInBackground(false)
        _ = try await phone.engine.sync()
        #expect(try await phone.values()["licence"] == .string("L1"))
    }

    @Test func aBackgroundUpToDateSyncSucceedsEvenWhileLocked() async throws {
        let (_, phone, keychain, _) = try await pairedPhone()
        keychain.setInBackground(true)
        keychain.setLocked(true)
        guard case .upToDate = try await PlatformDeviceKeyStore.withoutPrompts({ try await phone.engine.sync() }) else {
            Issue.record("a 304 needs no key")
            return
        }
        #expect(keychain.prompts == 1, "only the pairing's prompt")
    }
}
