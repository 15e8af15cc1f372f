import Foundation
import Testing
import VaultCore
import VaultEnvelope
import VaultTestSupport
import WalletVault

/// A Secure Enclave phone approved again while a member (a pairing request made on it, approved by the laptop, as a
/// member that must confirm again is) holds two entries for one key: its self-ECDH entry and the pairing entry wrapped
/// to that key's public half. Revoking it by its own entry must remove both, or the revoked phone still opens every
/// later version through the other (security review, finding 1); revoking the public-key entry does not widen to the
/// phone's own entry, which leaves as a skipped entry, as in any rotation by another device.
@Suite("Entries that hold one key: a revoke removes them all")
struct TwinEntryTests {
    @Test(arguments: [false, true])
    func revokingAPhoneRemovesEveryEntryOfItsKey(byPairingEntry: Bool) async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let laptop = try SimulatedDevice(server: server, user: user, label: "Laptop")
        let phone = try SimulatedDevice(server: server, user: user, label: "iPhone", keychain: FakeKeychain())
        _ = try await laptop.engine.createVault()
        try await laptop.set("passport", "P1")
        _ = try await laptop.engine.sync()
        _ = try await laptop.engine.pairAndConfirm(phone.engine)
        let request = try await phone.engine.pairingRequest()
        _ = try await laptop.engine.approve(request)
        let ownKekID = Base64URL.encode(request.publicKey.rawRepresentation)
        let pairingKekID = PublicKeyRecipient(request.publicKey).kekID
        let twins = try await Self.storedKekIDs(laptop)
        #expect(twins.contains(ownKekID) && twins.contains(pairingKekID), "the scenario needs both entries: \(twins)")
        let report = try await laptop.engine.revoke(kekID: byPairingEntry ? pairingKekID : ownKekID)
        let after = try await Self.storedKekIDs(laptop)
        #expect(!after.contains(pairingKekID), "the pairing entry to the phone's key survived the revocation")
        #expect(!after.contains(ownKekID), "the phone's self-ECDH entry survived the revocation")
        #expect(after.count == 1, "\(after)")
        guard case .rotated(_, let skipped) = report else {
            Issue.record("no rotation: \(report)")
            return
        }
        // Revoked by its public-key entry (which anyone can ask for with the phone's public key), the phone's own
        // entry is not removed as its twin: it leaves as every self-ECDH entry does in another device's rotation, named
        // among the skipped (its holder must wrap), so the user is told the phone must pair again.
        #expect(skipped.map(\.kekID) == (byPairingEntry ? [ownKekID] : []), "\(skipped)")
    }

    /// The phone's next sync after such an approval drops the pairing entry again (its own entry stands for the same
    /// key), so the device list shows it once. Before, a device enrolled already kept the pairing entry for good.
    @Test func theApprovedMembersNextSyncDropsThePairingEntryToItsOwnKey() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let laptop = try SimulatedDevice(server: server, user: user, label: "Laptop")
        let phone = try SimulatedDevice(server: server, user: user, label: "iPhone", keychain: FakeKeychain())
        _ = try await laptop.engine.createVault()
        _ = try await laptop.engine.pairAndConfirm(phone.engine)
        let request = try await phone.engine.pairingRequest()
        _ = try await laptop.engine.approve(request)
        let pairingKekID = PublicKeyRecipient(request.publicKey).kekID
        #expect(try await Self.storedKekIDs(laptop).contains(pairingKekID))
        _ = try await phone.engine.sync()
        let after = try await Self.storedKekIDs(laptop)
        #expect(!after.contains(pairingKekID), "the pairing entry to the phone's own key stayed: \(after)")
        #expect(after.contains(Base64URL.encode(request.publicKey.rawRepresentation)) && after.count == 2, "\(after)")
    }

    /// When the save of that restore fails, the next sync drops the pairing entry although the phone is up to date;
    /// before, an up-to-date sync of an enrolled phone saved nothing, and the entry stayed until its next edit.
    @Test func anUpToDateSyncDropsThePairingEntryWhoseSaveFailed() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let lossy = ScriptedAnswers(server.transport())
        let laptop = try SimulatedDevice(server: server, user: user, label: "Laptop")
        let phone = try SimulatedDevice(
            baseURL: server.baseURL, user: user, label: "iPhone", directory: nil, transport: lossy, conflictHandler: nil,
            keychain: FakeKeychain())
        _ = try await laptop.engine.createVault()
        _ = try await laptop.engine.pairAndConfirm(phone.engine)
        let request = try await phone.engine.pairingRequest()
        _ = try await laptop.engine.approve(request)
        let pairingKekID = PublicKeyRecipient(request.publicKey).kekID
        lossy.play([.networkError, .networkError], to: .saves)
        await #expect(throws: SyncError.self) { _ = try await phone.engine.sync() }
        #expect(try await Self.storedKekIDs(laptop).contains(pairingKekID), "the failed save was stored")
        guard case .pushed = try await phone.engine.sync() else {
            Issue.record("the up-to-date sync saved nothing")
            return
        }
        #expect(!(try await Self.storedKekIDs(laptop).contains(pairingKekID)))
    }

    /// A phone that is a member only through its pairing entry (the save enrolling its own entry failed) and whose key
    /// then died in place pairs again with a new key. Before, the pairing request tried only the phone's own entry,
    /// found none, and handed out the dead key again: the approver found it enrolled already, and confirming failed
    /// with `.keyInvalidated`, at every attempt (diff review finding 4).
    @Test func aPhoneMemberOnlyThroughItsPairingEntryWhoseKeyDiedPairsAgainWithANewKey() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let lossy = ScriptedAnswers(server.transport())
        let keychain = FakeKeychain()
        let laptop = try SimulatedDevice(server: server, user: user, label: "Laptop")
        let phone = try SimulatedDevice(
            baseURL: server.baseURL, user: user, label: "iPhone", directory: nil, transport: lossy, conflictHandler: nil,
            keychain: keychain)
        _ = try await laptop.engine.createVault()
        try await laptop.set("passport", "P1")
        _ = try await laptop.engine.sync()
        let code = try await laptop.engine.approveAndGetCode(phone.engine)
        lossy.play([.networkError, .networkError], to: .saves)
        await #expect(throws: SyncError.self) { _ = try await phone.engine.confirmPairing(code: code) }
        let first = try await phone.engine.pairingRequest()
        #expect(try await Self.storedKekIDs(laptop).contains(PublicKeyRecipient(first.publicKey).kekID))
        keychain.invalidateCurrentKey()
        let again = try await phone.engine.pairingRequest()
        #expect(again.publicKey.rawRepresentation != first.publicKey.rawRepresentation, "the dead key was handed out again")
        guard case .restored = try await laptop.engine.pairAndConfirm(phone.engine) else {
            Issue.record("the phone did not pair again")
            return
        }
        #expect(try await phone.values() == ["passport": .string("P1")])
        let after = try await Self.storedKekIDs(laptop)
        #expect(!after.contains(PublicKeyRecipient(first.publicKey).kekID), "the dead key's pairing entry stayed: \(after)")
        #expect(after.count == 2, "\(after)")
    }

    static func storedKekIDs(_ device: SimulatedDevice) async throws -> [String] {
        guard case .blob(let stored) = try await device.backup.load() else { return [] }
        return try VaultEnvelope(parsing: stored.blob).entries.map(\.kekID)
    }
}
