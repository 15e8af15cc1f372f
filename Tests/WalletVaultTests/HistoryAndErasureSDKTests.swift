import Foundation
import Testing
import VaultCore
import VaultTestSupport
import WalletVault

/// The SDK's version history, restore of an old version and erasure, against the real service in process.
@Suite("SDK: history, restoring a version, erasing the account")
struct HistoryAndErasureSDKTests {
    func devices() async throws -> (SimulatedDevice, SimulatedDevice) {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let a = try SimulatedDevice(server: server, user: user, label: "Laptop")
        let b = try SimulatedDevice(server: server, user: user, label: "Phone")
        _ = try await a.engine.createVault()
        _ = try await a.engine.pairAndConfirm(b.engine)
        return (a, b)
    }

    @Test func restoresAnOldVersionAsTheNewestContentOnEveryDevice() async throws {
        let (a, b) = try await devices()
        try await a.set("passport", "P1")
        try await a.set("licence", "L1")
        _ = try await a.engine.sync()
        let old = try #require(try await a.engine.status().syncedVersion)
        try await a.set("passport", "P2")
        try await a.engine.edit { document, now in document.delete("licence", at: now) }
        try await a.set("ticket", "T1")
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        #expect(try await b.values() == ["passport": .string("P2"), "ticket": .string("T1")])

        let history = try await a.engine.history()
        #expect(history.count >= 3)
        #expect(history.map(\.syncID).contains(old))
        #expect(history.first?.syncID == (try await a.engine.status().syncedVersion), "newest first")
        #expect(history.allSatisfy { $0.bytes > 0 && $0.hint != nil })

        let report = try await a.engine.restoreVersion(old)
        guard case .restoredVersion(let from, let version) = report else {
            Issue.record("got \(report)")
            return
        }
        #expect(from == old)
        #expect(version != old)
        #expect(try await a.values() == ["passport": .string("P1"), "licence": .string("L1")])
        // Another device takes the restore as newer content, through the normal open path and its counter.
        guard case .restored = try await b.engine.sync() else {
            Issue.record("B should restore")
            return
        }
        #expect(try await b.values() == ["passport": .string("P1"), "licence": .string("L1")])
        // And the newer content is still in the history.
        #expect(try await a.engine.history().count == history.count + 1)
    }

    @Test func aRestoreNeverOverwritesARacingDevicesSave() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let gate = RequestGate()
        let a = try SimulatedDevice(server: server, user: user, label: "Laptop", gate: gate)
        let b = try SimulatedDevice(server: server, user: user, label: "Phone")
        _ = try await a.engine.createVault()
        _ = try await a.engine.pairAndConfirm(b.engine)
        try await a.set("passport", "P1")
        _ = try await a.engine.sync()
        let old = try #require(try await a.engine.status().syncedVersion)
        try await a.set("passport", "P2")
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        // B saves while A fetches the old version: A's save of it names the version A knew, and is refused.
        gate.arm { $0?.url?.query?.contains("sync_id=") == true }
        let engine = a.engine
        let restore = Task { try await engine.restoreVersion(old) }
        await gate.arrival()
        try await b.set("ticket", "from B")
        _ = try await b.engine.sync()
        gate.release()
        do {
            _ = try await restore.value
            Issue.record("the restore overwrote B's save")
        } catch let error as SyncError {
            guard case .conflict? = error.backupError else {
                Issue.record("expected a 409, got \(error)")
                return
            }
        }
        _ = try await a.engine.sync()
        #expect(try await a.values()["ticket"] == .string("from B"))
        #expect(try await a.values()["passport"] == .string("P2"))
    }

    @Test func aVersionThisDeviceCannotOpenIsRefusedWithNothingChanged() async throws {
        let (a, _) = try await devices()
        try await a.set("passport", "P1")
        _ = try await a.engine.sync()
        let before = try await a.values()
        do {
            _ = try await a.engine.restoreVersion("2001-01-01T00:00:00.000Z")
            Issue.record("a version that is not kept was restored")
        } catch {
            #expect(error.code == .server)
            #expect(error.backupError == .notFound)
        }
        #expect(try await a.values() == before)
    }

    @Test func erasingRemovesTheServersCopyAndThisDevicesAndSaysSo() async throws {
        let (a, b) = try await devices()
        try await a.set("passport", "P1")
        _ = try await a.engine.sync()
        try await a.engine.eraseAccount()
        #expect(try await a.engine.document() == nil)
        let status = await a.engine.status()
        #expect(status.erasedAt != nil)
        #expect(status.syncedVersion == nil)
        #expect(try await a.engine.history().isEmpty)
        do {
            _ = try await b.backup.load()
            Issue.record("the server still serves the vault")
        } catch {
            #expect(error == .notFound)
        }
        // The erased vault's counter is forgotten: a new vault created here opens again.
        _ = try await a.engine.createVault()
        try await a.set("fresh", "yes")
        #expect(try await a.engine.sync().version != nil)
        #expect(try await a.values() == ["fresh": .string("yes")])
    }
}
