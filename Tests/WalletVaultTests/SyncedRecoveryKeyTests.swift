import Foundation
import Testing
import VaultCore
import VaultEnvelope
import VaultTestSupport
import WalletVault

/// Issue #28 point 5 through the keychain fakes: the iCloud Keychain recovery key, an optional second way in that a
/// restored or new iPhone of the same Apple account uses once its Secure Enclave key is gone.
@Suite("The iCloud Keychain recovery key")
struct SyncedRecoveryKeyTests {
    /// Phone A creates the vault with a recovery code, saves an item and turns the synced key on.
    func phoneWithSyncedKey() async throws -> (InProcessServer, String, SimulatedDevice, FakeKeychain) {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let keychain = FakeKeychain()
        let a = try SimulatedDevice(server: server, user: user, label: "iPhone A", keychain: keychain, syncedKeys: keychain.account)
        _ = try await a.engine.createVault(recoveryPaths: [(try RecoveryCodeKEK(code: RecoveryCode.generate()), "recovery code")])
        try await a.set("passport", "P1")
        _ = try await a.engine.sync()
        _ = try await a.engine.enableSyncedRecoveryKey()
        return (server, user, a, keychain)
    }

    /// Another phone signed in to the same Apple account: it sees the synchronizable items, not A's key item.
    func secondPhone(_ server: InProcessServer, _ user: String, of account: FakeAppleAccount) throws -> (SimulatedDevice, FakeKeychain) {
        let keychain = FakeKeychain(account: account)
        return (try SimulatedDevice(server: server, user: user, label: "iPhone B", keychain: keychain, syncedKeys: account), keychain)
    }

    /// A phone whose saves wait out the hourly cap turns the synced key on after another phone of the same Apple
    /// account did: before, its sync loaded nothing during the pause, the key it found in the account was in none of
    /// the entries it had, and it stored a new one in its place, so the vault's entry for the first key had no key
    /// behind it anywhere and a new phone could not recover with it.
    @Test func aPhoneInTheCapsPauseKeepsTheSyncedKeyAnotherPhoneTurnedOn() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let keychainA = FakeKeychain()
        let limited = ScriptedAnswers(server.transport())
        let a = try SimulatedDevice(
            baseURL: server.baseURL, user: user, label: "iPhone A", directory: nil, transport: limited, conflictHandler: nil,
            keychain: keychainA, syncedKeys: keychainA.account)
        _ = try await a.engine.createVault(recoveryPaths: [(try RecoveryCodeKEK(code: RecoveryCode.generate()), "recovery code")])
        try await a.set("passport", "P1")
        _ = try await a.engine.sync()
        let (b, _) = try secondPhone(server, user, of: keychainA.account)
        _ = try await a.engine.pairAndConfirm(b.engine)
        try await a.set("licence", "L1")
        limited.play([.rateLimited(retryAfter: 120)], to: .saves)
        guard case .rateLimited = try await a.engine.sync() else {
            Issue.record("expected the rate limit")
            return
        }
        _ = try await b.engine.enableSyncedRecoveryKey()
        #expect(keychainA.account.writes == 1)
        _ = try? await a.engine.enableSyncedRecoveryKey()
        #expect(keychainA.account.writes == 1, "the key B stored is kept")
        let (c, _) = try secondPhone(server, user, of: keychainA.account)
        guard case .restored = try await c.engine.recoverWithSyncedKey() else {
            Issue.record("a new phone should recover with the synced key")
            return
        }
        #expect(try await c.values()["passport"] == .string("P1"))
    }

    @Test func aNewPhoneOfTheSameAccountOpensWithTheSyncedKeyAndEnrollsItsOwnSecureEnclaveKey() async throws {
        let (server, user, a, keychainA) = try await phoneWithSyncedKey()
        let synced = try #require(try await a.engine.devices().first { $0.isSyncedRecoveryKey })
        let (b, keychainB) = try secondPhone(server, user, of: keychainA.account)
        #expect(keychainB.storedItem == nil, "no Secure Enclave key on the new phone")
        await requireError(.noAccess) { _ = try await b.engine.sync() }
        guard case .restored = try await b.engine.recoverWithSyncedKey() else {
            Issue.record("the synced key should restore the vault")
            return
        }
        #expect(try await b.values() == ["passport": .string("P1")])
        #expect(keychainB.storedItem != nil, "its own key was created")
        let entries = try await b.engine.devices()
        let own = try #require(entries.first { $0.isThisDevice })
        #expect(own.algorithm == "WV-ECDH-SELF+A256GCMKW")
        #expect(entries.contains { $0.kekID == synced.kekID && $0.isSyncedRecoveryKey }, "the synced key stays a recovery path")
        #expect(entries.count == 4, "A, B, the recovery code and the synced key")
        // B is a member with its own key from now on: it saves, A reads it, and B's next sync needs no synced key.
        try await b.set("licence", "L1")
        _ = try await b.engine.sync()
        _ = try await a.engine.sync()
        #expect(try await a.values()["licence"] == .string("L1"))
    }

    @Test func aPhoneRestoredFromBackupRecoversWithTheSyncedKeyAndDropsItsDeadEntry() async throws {
        let (_, _, a, keychain) = try await phoneWithSyncedKey()
        let dead = try #require(try await a.engine.devices().first { $0.isThisDevice }?.kekID)
        // The profile came back from the backup; the Secure Enclave key and its ThisDeviceOnly item did not.
        keychain.dropItem()
        await requireError(.keyInvalidated) { _ = try await a.engine.sync() }
        _ = try await a.engine.recoverWithSyncedKey()
        let entries = try await a.engine.devices()
        #expect(!entries.contains { $0.kekID == dead })
        #expect(entries.filter(\.isThisDevice).count == 1)
        #expect(entries.contains { $0.isSyncedRecoveryKey })
        #expect(try await a.values() == ["passport": .string("P1")])
    }

    @Test func itIsOptionalWithoutTurningItOnNothingSynchronizableIsStored() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let keychain = FakeKeychain()
        let a = try SimulatedDevice(server: server, user: user, label: "iPhone A", keychain: keychain, syncedKeys: keychain.account)
        _ = try await a.engine.createVault(recoveryPaths: [(try RecoveryCodeKEK(code: RecoveryCode.generate()), "recovery code")])
        try await a.set("passport", "P1")
        _ = try await a.engine.sync()
        #expect(keychain.account.synchronizableItems == 0)
        #expect(keychain.account.writes == 0)
        #expect(try await !a.engine.devices().contains { $0.isSyncedRecoveryKey })
        #expect(try await a.engine.keyHealth().hasSyncedRecoveryKey == false)
        let (b, _) = try secondPhone(server, user, of: keychain.account)
        await requireError(.noAccess) { _ = try await b.engine.recoverWithSyncedKey() }
    }

    @Test func devicesAndKeyHealthShowItAsARecoveryPathAlsoOnADeviceWithoutIt() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let keychain = FakeKeychain()
        let laptop = try SimulatedDevice(server: server, user: user, label: "Laptop")
        let phone = try SimulatedDevice(server: server, user: user, label: "iPhone", keychain: keychain, syncedKeys: keychain.account)
        _ = try await laptop.engine.createVault(recoveryPaths: [(try RecoveryCodeKEK(code: RecoveryCode.generate()), "recovery code")])
        _ = try await laptop.engine.pairAndConfirm(phone.engine)
        _ = try await phone.engine.enableSyncedRecoveryKey()
        _ = try await phone.engine.enableSyncedRecoveryKey()
        #expect(keychain.account.writes == 1, "turning it on again changes nothing")
        let entries = try await phone.engine.devices()
        #expect(entries.filter(\.isSyncedRecoveryKey).count == 1)
        let synced = try #require(entries.first { $0.isSyncedRecoveryKey })
        #expect(synced.label == SyncedRecoveryKey.label)
        #expect(synced.algorithm == "A256KW")
        #expect(synced.isRecoveryPath)
        #expect(!synced.isThisDevice)
        let health = try await phone.engine.keyHealth()
        #expect(health.hasSyncedRecoveryKey)
        #expect(health.recoveryPaths == 2 && health.deviceKeys == 2)
        #expect(health.usableHere.contains(synced.kekID), "this phone holds the synced key")
        #expect(health.warning == nil)
        // The laptop has no iCloud Keychain: it tells the entry by its label.
        _ = try await laptop.engine.sync()
        let seen = try #require(try await laptop.engine.devices().first { $0.kekID == synced.kekID })
        #expect(seen.isRecoveryPath && seen.isSyncedRecoveryKey)
        #expect(try await laptop.engine.keyHealth().recoveryPaths == 2)
    }

    @Test func asTheOnlyRecoveryPathKeyHealthAsksForARecoveryCode() async throws {
        let server = try InProcessServer()
        let keychain = FakeKeychain()
        let phone = try SimulatedDevice(
            server: server, user: UUID().uuidString, label: "iPhone", keychain: keychain, syncedKeys: keychain.account)
        _ = try await phone.engine.createVault()
        _ = try await phone.engine.enableSyncedRecoveryKey()
        let health = try await phone.engine.keyHealth()
        #expect(health.recoveryPaths == 1 && health.hasSyncedRecoveryKey)
        #expect(health.warning?.contains("iCloud Keychain") == true)
    }

    @Test func revokingItRemovesTheEntryAndTheItemOnEveryPhone() async throws {
        let (server, user, a, keychain) = try await phoneWithSyncedKey()
        let synced = try #require(try await a.engine.devices().first { $0.isSyncedRecoveryKey })
        guard case .rotated = try await a.engine.revoke(kekID: synced.kekID) else {
            Issue.record("a revoke rotates")
            return
        }
        #expect(try await !a.engine.devices().contains { $0.kekID == synced.kekID || $0.isSyncedRecoveryKey })
        #expect(try await a.engine.keyHealth().hasSyncedRecoveryKey == false)
        #expect(keychain.account.synchronizableItems == 0, "the item is deleted, on every device of the account")
        let (b, _) = try secondPhone(server, user, of: keychain.account)
        await requireError(.noAccess) { _ = try await b.engine.recoverWithSyncedKey() }
        // Turning it on again makes a new key: the revoked one is never enrolled again.
        _ = try await a.engine.enableSyncedRecoveryKey()
        let again = try #require(try await a.engine.devices().first { $0.isSyncedRecoveryKey })
        #expect(again.kekID != synced.kekID)
    }

    @Test func rotationsOnAPhoneThatHoldsItKeepItAndNewRecoveryCodesLeaveIt() async throws {
        let (server, user, a, keychain) = try await phoneWithSyncedKey()
        let synced = try #require(try await a.engine.devices().first { $0.isSyncedRecoveryKey })
        _ = try await a.engine.replaceRecoveryPaths(with: [(try RecoveryCodeKEK(code: RecoveryCode.generate()), "recovery code")])
        let code = try #require(try await a.engine.devices().first { $0.label == "recovery code" })
        guard case .rotated(_, let skipped) = try await a.engine.revoke(kekID: code.kekID) else {
            Issue.record("a revoke rotates")
            return
        }
        #expect(skipped.isEmpty, "the synced key is re-wrapped without a prompt")
        #expect(try await a.engine.devices().contains { $0.kekID == synced.kekID })
        #expect(keychain.account.synchronizableItems == 1)
        let (b, _) = try secondPhone(server, user, of: keychain.account)
        _ = try await b.engine.recoverWithSyncedKey()
        #expect(try await b.values() == ["passport": .string("P1")])
    }
}
