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
    func pairedPhone(on server: InProcessServer? = nil, user: String = UUID().uuidString) async throws
        -> (SimulatedDevice, SimulatedDevice, FakeKeychain, RecoveryCode)
    {
        let server = try server ?? InProcessServer()
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

    /// A phone paired by a laptop whose enrolment save (its own self-ECDH entry in place of the pairing entry) fails on
    /// both of the client's attempts, as `saveFailures` plays them: the pairing restored the vault all the same.
    struct InterruptedEnrolment {
        let laptop: SimulatedDevice
        let phone: SimulatedDevice
        /// The phone's own self-ECDH entry's kek_id, and the pairing entry's, which the laptop wrapped to.
        let ownKekID: String
        let pairingKekID: String
        /// What confirming the pairing reported or threw.
        let pairingReport: SyncReport?
        let pairingError: SyncError?

        init(saveFailures: [ScriptedAnswers.Outcome] = [.networkError, .unavailable]) async throws {
            let server = try InProcessServer()
            let user = UUID().uuidString
            let lossy = ScriptedAnswers(server.transport())
            laptop = try SimulatedDevice(server: server, user: user, label: "Laptop")
            phone = try SimulatedDevice(
                baseURL: server.baseURL, user: user, label: "iPhone", directory: nil, transport: lossy, conflictHandler: nil,
                keychain: FakeKeychain())
            _ = try await laptop.engine.createVault()
            try await laptop.set("passport", "P1")
            _ = try await laptop.engine.sync()
            let request = try await phone.engine.pairingRequest()
            ownKekID = Base64URL.encode(request.publicKey.rawRepresentation)
            pairingKekID = PublicKeyRecipient(request.publicKey).kekID
            // The phone's first save is the enrolment; the laptop's saves go by a transport of their own.
            lossy.play(saveFailures, to: .saves)
            do {
                pairingReport = try await laptop.engine.pairAndConfirm(phone.engine)
                pairingError = nil
            } catch let error as SyncError {
                pairingReport = nil
                pairingError = error
            }
            #expect(try await phone.values() == ["passport": .string("P1")], "the restore was committed before the enrolment")
            #expect(try await storedKekIDs().contains(pairingKekID))
            #expect(try await storedKekIDs().contains(ownKekID) == false)
        }

        /// The kek_ids of the vault the server holds.
        func storedKekIDs() async throws -> [String] { try await PlatformKeyTests.storedKekIDs(laptop) }

        /// The server's vault has the phone's own entry and no pairing entry, and the laptop's entry is still there.
        func expectEnrolled() async throws {
            let stored = try await storedKekIDs()
            #expect(stored.contains(ownKekID), "the phone's own entry was enrolled")
            #expect(!stored.contains(pairingKekID), "the pairing entry was dropped")
            #expect(stored.count == 2, "\(stored)")
        }

        /// Both devices read what the other saves from here on.
        func expectBothRead(_ expected: [String: JSONValue]) async throws {
            _ = try await laptop.engine.sync()
            #expect(try await laptop.values() == expected)
            try await laptop.set("after", "L")
            _ = try await laptop.engine.sync()
            _ = try await phone.engine.sync()
            #expect(try await phone.values() == expected.merging(["after": .string("L")]) { $1 })
        }
    }

    @Test func anUpToDateSyncEnrollsThePhoneWhoseEnrolmentSaveFailed() async throws {
        let paired = try await InterruptedEnrolment()
        #expect(paired.pairingError?.code == .server, "the enrolment's save failed: \(String(describing: paired.pairingReport))")
        guard case .pushed = try await paired.phone.engine.sync() else {
            Issue.record("the sync should have saved the enrolment")
            return
        }
        try await paired.expectEnrolled()
        guard case .upToDate = try await paired.phone.engine.sync() else {
            Issue.record("an enrolled phone has nothing to save")
            return
        }
        try await paired.expectBothRead(["passport": .string("P1")])
    }

    @Test func aPushEnrollsThePhoneWhoseEnrolmentSaveFailed() async throws {
        let paired = try await InterruptedEnrolment()
        try await paired.phone.set("licence", "L1")
        guard case .pushed = try await paired.phone.engine.sync() else {
            Issue.record("the phone's edit should be pushed")
            return
        }
        try await paired.expectEnrolled()
        try await paired.expectBothRead(["passport": .string("P1"), "licence": .string("L1")])
    }

    @Test func aMergeEnrollsThePhoneWhoseEnrolmentSaveFailed() async throws {
        let paired = try await InterruptedEnrolment()
        try await paired.laptop.set("a-only", "A")
        _ = try await paired.laptop.engine.sync()
        try await paired.phone.set("b-only", "B")
        guard case .merged = try await paired.phone.engine.sync() else {
            Issue.record("the phone's edit should be merged")
            return
        }
        try await paired.expectEnrolled()
        try await paired.expectBothRead(["passport": .string("P1"), "a-only": .string("A"), "b-only": .string("B")])
    }

    /// A 429 on the enrolment postpones it as it does an edit: the syncs before the next allowed attempt save nothing.
    @Test func aRateLimitedEnrolmentWaitsForTheNextAllowedAttempt() async throws {
        let paired = try await InterruptedEnrolment(saveFailures: [.rateLimited(retryAfter: 3600)])
        guard case .rateLimited? = paired.pairingReport else {
            Issue.record("the enrolment's save should be rate limited: \(String(describing: paired.pairingError))")
            return
        }
        let stored = try await paired.storedKekIDs()
        guard case .upToDate = try await paired.phone.engine.sync() else {
            Issue.record("the enrolment waits for the next allowed attempt")
            return
        }
        #expect(try await paired.storedKekIDs() == stored)
    }

    /// The kek_ids of the vault the server holds, as `device` loads it.
    static func storedKekIDs(_ device: SimulatedDevice) async throws -> [String] {
        guard case .blob(let stored) = try await device.backup.load() else { throw SyncError(.noVault, "nothing stored") }
        return try VaultEnvelope(parsing: stored.blob).entries.map(\.kekID)
    }

    // MARK: - Pairing again after the key died (seed §7)

    /// The phone, whose key died after the laptop saved an item it has not read, pairs again: its request carries a
    /// new key, the laptop approves, the phone confirms and restores the laptop's content; the server's vault then has
    /// the new key's own entry and neither the dead key's entry nor the pairing entry, and each device reads what the
    /// other saves.
    func expectPairsAgain(laptop: SimulatedDevice, phone: SimulatedDevice, deadKekID: String) async throws {
        await requireError(.keyInvalidated) { _ = try await phone.engine.sync() }
        let request = try await phone.engine.pairingRequest()
        let newKekID = Base64URL.encode(request.publicKey.rawRepresentation)
        #expect(newKekID != deadKekID, "the request carries a new key, not the dead key's public half")
        _ = try await laptop.engine.approve(request)
        let report = try await phone.engine.confirmPairing(code: try await laptop.engine.confirmationCode(for: request))
        guard case .restored = report else {
            Issue.record("confirming should restore: \(report)")
            return
        }
        #expect(try await phone.values() == (try await laptop.values()))
        #expect(try await phone.values()["licence"] == .string("L1"))
        let stored = try await Self.storedKekIDs(laptop)
        #expect(!stored.contains(deadKekID), "the dead entry is dropped: \(stored)")
        #expect(stored.contains(newKekID), "the new key's own entry is enrolled: \(stored)")
        #expect(!stored.contains(PublicKeyRecipient(request.publicKey).kekID), "the pairing entry is dropped: \(stored)")
        try await phone.set("from-phone", "P")
        _ = try await phone.engine.sync()
        _ = try await laptop.engine.sync()
        #expect(try await laptop.values()["from-phone"] == .string("P"))
        try await laptop.set("from-laptop", "L")
        _ = try await laptop.engine.sync()
        _ = try await phone.engine.sync()
        #expect(try await phone.values() == (try await laptop.values()))
        #expect(try await phone.values()["from-laptop"] == .string("L"))
    }

    @Test func aPhoneWhoseKeyIsGonePairsAgainWithANewKeyAndItsDeadEntryIsDropped() async throws {
        let (laptop, phone, keychain, _) = try await pairedPhone()
        let dead = try #require(try await phone.engine.devices().first { $0.isThisDevice }?.kekID)
        try await laptop.set("licence", "L1")
        _ = try await laptop.engine.sync()
        // Restored onto another phone: neither the Secure Enclave key nor its `ThisDeviceOnly` item came along.
        keychain.dropItem()
        try await expectPairsAgain(laptop: laptop, phone: phone, deadKekID: dead)
    }

    @Test func aPhoneWhoseKeyDiedInPlacePairsAgainWithANewKeyAndItsDeadEntryIsDropped() async throws {
        let (laptop, phone, keychain, _) = try await pairedPhone()
        let dead = try #require(try await phone.engine.devices().first { $0.isThisDevice }?.kekID)
        try await laptop.set("licence", "L1")
        _ = try await laptop.engine.sync()
        // A face added: the item is still there, but the key fails in use and the recorded biometry changed.
        keychain.invalidateCurrentKey()
        try await expectPairsAgain(laptop: laptop, phone: phone, deadKekID: dead)
    }

    // MARK: - Recovering again after an attempt that failed

    @Test func aRecoveryStoppedByAnUnresolvedConflictKeepsTheKeyAndItsRetryDropsTheDeadEntry() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let (laptop, phone, keychain, code) = try await pairedPhone(on: server, user: user)
        let dead = try #require(try await phone.engine.devices().first { $0.isThisDevice }?.kekID)
        try await phone.set("passport", "P-phone")
        try await laptop.set("passport", "P-laptop")
        _ = try await laptop.engine.sync()
        keychain.dropItem()
        await requireError(.unresolvedConflict) { _ = try await phone.engine.recover(with: try RecoveryCodeKEK(code: code)) }
        #expect(keychain.storedItem == nil, "a recovery that decided nothing made no key")
        // The app asks its user and recovers again, now with a conflict handler: the same profile and keychain.
        let handler = RecordingConflictHandler(answer: .keepLocal)
        let retried = try SimulatedDevice(
            server: server, user: user, label: "iPhone", directory: phone.directory, conflictHandler: handler.handler,
            keychain: keychain)
        let report = try await retried.engine.recover(with: try RecoveryCodeKEK(code: code))
        guard case .restored = report else {
            Issue.record("the retry should recover: \(report)")
            return
        }
        #expect(handler.questions == [["passport"]])
        let stored = try await Self.storedKekIDs(laptop)
        #expect(!stored.contains(dead), "the dead entry is dropped: \(stored)")
        let own = try #require(try await retried.engine.devices().first { $0.isThisDevice })
        #expect(stored.contains(own.kekID))
        _ = try await laptop.engine.sync()
        #expect(try await laptop.values()["passport"] == .string("P-phone"))
    }

    @Test func aRecoveryWhoseSaveFailedDropsTheDeadEntryWhenRetried() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let (laptop, phone, keychain, code) = try await pairedPhone(on: server, user: user)
        let dead = try #require(try await phone.engine.devices().first { $0.isThisDevice }?.kekID)
        keychain.dropItem()
        // The same phone over a network that drops its next saves (both of the client's attempts).
        let lossy = ScriptedAnswers(server.transport())
        let offline = try SimulatedDevice(
            baseURL: server.baseURL, user: user, label: "iPhone", directory: phone.directory, transport: lossy,
            conflictHandler: nil, keychain: keychain)
        lossy.play([.networkError, .unavailable], to: .saves)
        await requireError(.server) { _ = try await offline.engine.recover(with: try RecoveryCodeKEK(code: code)) }
        _ = try await offline.engine.recover(with: try RecoveryCodeKEK(code: code))
        let stored = try await Self.storedKekIDs(laptop)
        #expect(!stored.contains(dead), "the dead entry is dropped: \(stored)")
        #expect(stored.count == 3, "the laptop, the recovery code and the phone's new key: \(stored)")
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
