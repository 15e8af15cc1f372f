import Foundation
import Synchronization
import Testing
import VaultCore
import VaultEnvelope
import VaultTestSupport
import WalletVault

/// The seed's failure mode to avoid, in the form a phone meets it: the user edits while a background sync awaits.
///
/// Each test holds one await of a sync (a request, or the conflict prompt), edits meanwhile, lets the sync finish,
/// and then requires the edit to be on this device and, after one more round on each device, on the other too.
@Suite("An edit made while a sync awaits is never lost")
struct EditDuringSyncTests {
    struct Pair {
        let server: InProcessServer
        let a: SimulatedDevice
        let b: SimulatedDevice
        let gate: RequestGate
    }

    /// A creates the vault, B pairs and restores; B's requests pass `gate`, which nothing is armed for yet.
    func pair(conflictHandler: VaultSyncEngine.ConflictHandler? = nil) async throws -> Pair {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let gate = RequestGate()
        let a = try SimulatedDevice(server: server, user: user, label: "A")
        let b = try SimulatedDevice(server: server, user: user, label: "B", gate: gate, conflictHandler: conflictHandler)
        _ = try await a.engine.createVault()
        try await a.set("passport", "P1")
        _ = try await a.engine.sync()
        _ = try await a.engine.pairAndConfirm(b.engine)
        // Awaited outside #expect: the changes() suites share this setup, and a full parallel run crashed in
        // swift_retain inside the closure #expect builds around an await.
        let restored = try await b.values()
        #expect(restored == ["passport": .string("P1")])
        return Pair(server: server, a: a, b: b, gate: gate)
    }

    /// Starts `device.engine.sync()`, waits until `gate` holds its armed await, runs `during`, releases, and returns.
    func sync(_ device: SimulatedDevice, holdingAt gate: RequestGate, during: () async throws -> Void) async throws -> SyncReport {
        let engine = device.engine
        let round = Task { try await engine.sync() }
        await gate.arrival()
        try await during()
        gate.release()
        return try await round.value
    }

    /// The edit is here now, and reaches the other device once each has synced again.
    func expectSurvives(_ id: String, _ value: String, on device: SimulatedDevice, peer: SimulatedDevice) async throws {
        let here = try await device.values()
        #expect(here[id] == .string(value), "the edit is gone from the device it was made on")
        _ = try await device.engine.sync()
        _ = try await peer.engine.sync()
        let there = try await peer.values()
        let hereAfter = try await device.values()
        #expect(there[id] == .string(value), "the edit never reached the other device")
        #expect(there == hereAfter)
    }

    @Test func editDuringThePushUploadStaysPending() async throws {
        let pair = try await pair()
        try await pair.b.set("licence", "L1")
        pair.gate.arm(method: "POST", action: "save")
        let report = try await sync(pair.b, holdingAt: pair.gate) { try await pair.b.set("card", "during the save") }
        guard case .pushed = report else {
            Issue.record("expected a push, got \(report)")
            return
        }
        let pending = await pair.b.engine.status().hasLocalEdits
        #expect(pending, "the edit after the upload must still be pending")
        try await expectSurvives("card", "during the save", on: pair.b, peer: pair.a)
        let licence = try await pair.a.values()["licence"]
        #expect(licence == .string("L1"))
    }

    @Test func editDuringThePushLoadIsSaved() async throws {
        let pair = try await pair()
        try await pair.b.set("licence", "L1")
        pair.gate.arm(method: "GET", action: "load")
        _ = try await sync(pair.b, holdingAt: pair.gate) { try await pair.b.set("card", "during the load") }
        try await expectSurvives("card", "during the load", on: pair.b, peer: pair.a)
    }

    @Test func editDuringARestoreIsMergedNotOverwritten() async throws {
        let pair = try await pair()
        try await pair.a.set("licence", "from A")
        _ = try await pair.a.engine.sync()
        pair.gate.arm(method: "GET", action: "load")
        let report = try await sync(pair.b, holdingAt: pair.gate) { try await pair.b.set("card", "during the restore") }
        guard case .merged = report else {
            Issue.record("the edit must turn the restore into a merge, got \(report)")
            return
        }
        let licence = try await pair.b.values()["licence"]
        #expect(licence == .string("from A"))
        try await expectSurvives("card", "during the restore", on: pair.b, peer: pair.a)
    }

    @Test func editDuringTheMergeUploadIsKept() async throws {
        let pair = try await pair()
        try await pair.a.set("licence", "from A")
        _ = try await pair.a.engine.sync()
        try await pair.b.set("ticket", "from B")
        pair.gate.arm(method: "POST", action: "save")
        let report = try await sync(pair.b, holdingAt: pair.gate) { try await pair.b.set("card", "during the merge") }
        guard case .merged = report else {
            Issue.record("expected a merge, got \(report)")
            return
        }
        let licence = try await pair.b.values()["licence"]
        #expect(licence == .string("from A"))
        let ticket = try await pair.b.values()["ticket"]
        #expect(ticket == .string("from B"))
        try await expectSurvives("card", "during the merge", on: pair.b, peer: pair.a)
    }

    @Test func editDuringTheConflictPromptIsKept() async throws {
        let prompt = RequestGate()
        let asked = AskCounter()
        let pair = try await pair { _ in
            asked.increment()
            await prompt.pass()
            return .merge
        }
        try await pair.a.set("passport", "from A")
        _ = try await pair.a.engine.sync()
        try await pair.b.set("passport", "from B")
        prompt.arm()
        let report = try await sync(pair.b, holdingAt: prompt) { try await pair.b.set("card", "during the prompt") }
        guard case .merged = report else {
            Issue.record("expected a merge, got \(report)")
            return
        }
        #expect(asked.count >= 1)
        let passport = try await pair.b.values()["passport"]
        #expect(passport == .string("from B"))
        try await expectSurvives("card", "during the prompt", on: pair.b, peer: pair.a)
    }

    @Test func editsPendingWhenTheDeviceKeyDiesSurviveTheRecovery() async throws {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let code = RecoveryCode.generate()
        let a = try SimulatedDevice(server: server, user: user, label: "A")
        let b = try SimulatedDevice(server: server, user: user, label: "B")
        _ = try await a.engine.createVault(recoveryPaths: [(try RecoveryCodeKEK(code: code), "recovery code")])
        try await a.set("passport", "P1")
        _ = try await a.engine.sync()
        _ = try await a.engine.pairAndConfirm(b.engine)
        // B edits offline, then loses its key (the platform destroyed it); A saves meanwhile.
        try await b.set("card", "offline edit")
        try FileManager.default.removeItem(at: b.directory.appendingPathComponent("device-key.pem"))
        try await a.set("licence", "from A")
        _ = try await a.engine.sync()
        _ = try await b.engine.recover(with: try RecoveryCodeKEK(code: code))
        let licence = try await b.values()["licence"]
        #expect(licence == .string("from A"))
        try await expectSurvives("card", "offline edit", on: b, peer: a)
    }

    @Test func concurrentSyncsRunOneAfterTheOther() async throws {
        let pair = try await pair()
        try await pair.b.set("licence", "L1")
        pair.gate.arm(method: "GET", action: "load")
        let engine = pair.b.engine
        let started = ContinuousClock.now
        let first = Task { try await engine.sync() }
        await pair.gate.arrival()
        let firstReachedTheNetwork = ContinuousClock.now - started
        let seenWhileHeld = pair.gate.seen
        let second = Task { try await engine.sync() }
        // The second sync must not reach the network while the first is held; give it every chance to. That it does
        // not can only be watched for a while: ten times as long as the first took to get there, at least 50 ms.
        for _ in 0..<50 { await Task.yield() }
        try await Task.sleep(for: max(.milliseconds(50), firstReachedTheNetwork * 10))
        #expect(pair.gate.seen == seenWhileHeld, "a second sync sent requests while the first was still running")
        pair.gate.release()
        guard case .pushed = try await first.value else {
            Issue.record("the first sync should push")
            return
        }
        guard case .upToDate = try await second.value else {
            Issue.record("the second sync should find nothing to do")
            return
        }
        _ = try await pair.a.engine.sync()
        let licence = try await pair.a.values()["licence"]
        #expect(licence == .string("L1"))
    }
}

/// Counts conflict prompts from a `@Sendable` handler.
final class AskCounter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
