import Foundation
import Testing
import VaultCore
import VaultEnvelope
import VaultTestSupport
import VaultWire
import WalletVault

/// Issue 26, point 6: a save or an erasure is taken from current members only (FORMAT.md §11.8), so a revoked device
/// that still holds the account login can no longer erase or overwrite the vault.
@Suite struct WriterProofSDKTests {
    /// The identity of the vault the server holds now, as whoever knows `code` reads it.
    static func identity(openedWith code: RecoveryCode, from device: SimulatedDevice) async throws -> VaultIdentity {
        guard case .blob(let snapshot) = try await device.backup.load() else { throw SyncError(.noVault, "nothing stored") }
        let opener = VaultOpener(counterStore: InMemoryCounterStore())
        let opened = try await opener.open(snapshot.blob, vaultID: "vault", keys: [try RecoveryCodeKEK(code: code)])
        return try #require(opened.state.identity)
    }

    @Test func aRevokedDeviceWithTheLoginCanNeitherEraseNorOverwriteTheVault() async throws {
        let (_, _, a, b) = try await JoiningAndLocalStateSDKTests.pairedDevices()
        let bKey = try #require(try await b.engine.devices().first { $0.isThisDevice }?.kekID)
        guard case .rotated = try await a.engine.revoke(kekID: bKey) else {
            Issue.record("the revocation did not rotate")
            return
        }
        // B's session still works (it holds the account login), but it is no member of the stored version.
        await requireError(.removedFromVault) { try await b.engine.eraseAccount() }
        await #expect(throws: BackupError.writerRefused) { try await b.backup.erase() }
        await #expect(throws: BackupError.writerRefused) { _ = try await b.backup.save(sampleBlob("overwritten")) }
        // A still reads and writes its vault.
        try await a.set("visa", "V1")
        _ = try await a.engine.sync()
        #expect(try await a.values()["passport"] == .string("P1"))
        #expect(try await a.values()["visa"] == .string("V1"))
    }

    /// A member whose sync before the erasure fails (here a conflict with no handler to decide it) is told why, and
    /// nothing is erased. Before, the failure was dropped, the erasure went out with a proof over the older version
    /// it still had, and the server's 403 reached the member as `.removedFromVault`: pair again or recover.
    @Test func aMemberWhoseSyncBeforeTheErasureFailsIsToldWhyAndNothingIsErased() async throws {
        let (_, _, a, b) = try await JoiningAndLocalStateSDKTests.pairedDevices()
        try await a.set("passport", "from A")
        _ = try await a.engine.sync()
        try await b.set("passport", "from B")
        await requireError(.unresolvedConflict) { try await b.engine.eraseAccount() }
        guard case .blob = try await a.backup.load() else {
            Issue.record("the vault was erased")
            return
        }
        #expect(try await b.values()["passport"] == .string("from B"), "nothing local changed")
    }

    @Test func theOldEpochsWriteKeyProvesNothingAfterTheRevocation() async throws {
        // The strongest revoked device: it knew the old epoch's secret (here through the old recovery code) and signs
        // with that epoch's write key over the version the server holds now.
        let (_, _, a, b, old) = try await RecoveryRotationSDKTests.vault()
        let before = try await Self.identity(openedWith: old, from: b)
        let bKey = try #require(try await b.engine.devices().first { $0.isThisDevice }?.kekID)
        _ = try await a.engine.revoke(kekID: bKey, newRecoveryPaths: [(try RecoveryCodeKEK(code: .generate()), "New code")])
        guard case .blob(let current) = try await b.backup.load() else {
            Issue.record("the vault is gone")
            return
        }
        let stale = WriterKeys(basis: before, next: before)
        await #expect(throws: BackupError.writerRefused) {
            try await b.backup.erase(writer: stale, storedSyncID: current.syncID)
        }
        await #expect(throws: BackupError.writerRefused) {
            _ = try await b.backup.save(sampleBlob("forged"), precondition: .ifMatch(syncID: current.syncID), writer: stale)
        }
        guard case .blob(let after) = try await a.backup.load() else {
            Issue.record("the vault is gone")
            return
        }
        #expect(after == current)
    }

    @Test func aMembersEveryWriteProvesItselfAndABareSaveIsRefused() async throws {
        let (_, _, a, b) = try await JoiningAndLocalStateSDKTests.pairedDevices()
        // The vault A created names a write key: the seed's bare save (a login and a blob) no longer replaces it.
        await #expect(throws: BackupError.writerRefused) { _ = try await a.backup.save(sampleBlob("bare")) }
        // Members sync, push, restore a version and erase with their proofs.
        try await b.set("licence", "L1")
        _ = try await b.engine.sync()
        _ = try await a.engine.sync()
        #expect(try await a.values()["licence"] == .string("L1"))
        let kept = try await a.engine.history()
        _ = try await a.engine.restoreVersion(try #require(kept.last?.syncID))
        _ = try await b.engine.sync()
        try await b.engine.eraseAccount()
        await #expect(throws: BackupError.notFound) { _ = try await a.backup.load() }
    }

    @Test func aSeedFormVaultStillTakesTheSeedsBareSaveAndErasure() async throws {
        let server = try InProcessServer()
        let seedClient = try SimulatedDevice(server: server, user: UUID().uuidString, label: "Seed app")
        _ = try await seedClient.backup.save(sampleBlob("seed-1"))
        _ = try await seedClient.backup.save(sampleBlob("seed-2"))
        guard case .blob(let stored) = try await seedClient.backup.load() else {
            Issue.record("nothing stored")
            return
        }
        #expect(stored.blob == sampleBlob("seed-2"))
        try await seedClient.backup.erase()
        await #expect(throws: BackupError.notFound) { _ = try await seedClient.backup.load() }
    }
}
