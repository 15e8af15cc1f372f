import Foundation
import Synchronization
import Testing
import VaultCore
import VaultTestSupport
import WalletVault

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 30, point 4: `VaultSyncEngine.changes()` long-polls, brings another device's save in as `sync()` does,
/// never loses an edit made while it applies one, and backs off on failures and 429.
///
/// Nothing is awaited inside `#expect`: two full parallel runs crashed in `swift_retain` inside the closure `#expect`
/// built around an await.
@Suite("changes() delivers other devices' saves as they happen")
struct LiveChangesSDKTests {
    /// How long a wait for many steps of `changes()` may take in the full parallel run on two shared cores.
    static let loadedMachine = Duration.seconds(120)

    /// Reads `engine.changes()` on a task of its own, handing each report to the returned stream.
    static func watch(_ engine: VaultSyncEngine) -> (reports: AsyncStream<SyncReport>, task: Task<Void, any Error>) {
        let (reports, sink) = AsyncStream<SyncReport>.makeStream()
        let task = Task {
            defer { sink.finish() }
            for try await report in engine.changes(waitSeconds: 20) { sink.yield(report) }
        }
        return (reports, task)
    }

    /// Waits until `count` long-polls wait on `server`, at most `timeout`; whether they did.
    static func waiting(_ count: Int, on server: InProcessServer, timeout: Duration = .seconds(10)) async throws -> Bool {
        let metrics = server.application.metrics
        return try await eventually(timeout: timeout) { metrics.waitingLongPolls == count }
    }

    @Test func anotherDevicesSaveArrivesWithoutASync() async throws {
        let pair = try await EditDuringSyncTests().pair()
        let watcher = Self.watch(pair.b.engine)
        defer { watcher.task.cancel() }
        let waited1 = try await Self.waiting(1, on: pair.server)
        #expect(waited1, "B's long-poll never waited")
        try await pair.a.set("licence", "from A")
        _ = try await pair.a.engine.sync()
        var reports = watcher.reports.makeAsyncIterator()
        let report = await reports.next()
        guard case .restored? = report else {
            Issue.record("expected B to restore A's save, got \(String(describing: report))")
            return
        }
        let licence = try await pair.b.values()["licence"]
        let savedByA = await pair.a.engine.status().syncedVersion
        #expect(licence == .string("from A"))
        #expect(report?.version == savedByA)
    }

    @Test func anEditMadeWhileAChangeIsAppliedIsKept() async throws {
        let edits = EditDuringSyncTests()
        let pair = try await edits.pair()
        let watcher = Self.watch(pair.b.engine)
        defer { watcher.task.cancel() }
        let waited1 = try await Self.waiting(1, on: pair.server)
        #expect(waited1, "B's long-poll never waited")
        // The load of the sync the wake-up starts, not a long-poll (which carries `wait`).
        pair.gate.arm { request in
            guard let request, request.httpMethod == "GET", let url = request.url else { return false }
            let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            return items.contains { $0.name == "action" && $0.value == "load" } && !items.contains { $0.name == "wait" }
        }
        try await pair.a.set("licence", "from A")
        _ = try await pair.a.engine.sync()
        await pair.gate.arrival()
        try await pair.b.set("card", "edited while A's save came in")
        pair.gate.release()
        var reports = watcher.reports.makeAsyncIterator()
        let report = await reports.next()
        #expect(report != nil, "the sequence ended instead of reporting A's save")
        watcher.task.cancel()
        let licence = try await pair.b.values()["licence"]
        #expect(licence == .string("from A"), "A's save never reached B")
        try await edits.expectSurvives("card", "edited while A's save came in", on: pair.b, peer: pair.a)
    }

    @Test func cancellingTheTaskEndsTheLongPoll() async throws {
        let pair = try await EditDuringSyncTests().pair()
        let watcher = Self.watch(pair.b.engine)
        let waited1 = try await Self.waiting(1, on: pair.server)
        #expect(waited1, "B's long-poll never waited")
        watcher.task.cancel()
        let waited0 = try await Self.waiting(0, on: pair.server)
        #expect(waited0, "the cancelled long-poll still waits")
        var reports = watcher.reports.makeAsyncIterator()
        let after = await reports.next()
        #expect(after == nil, "the sequence did not end")
    }

    @Test func failuresPauseDoublingToAMinuteAndA429PausesItsRetryAfter() async throws {
        // The 429 pauses its Retry-After and leaves the failure backoff as it was; failures double it up to 60 s.
        try await expectPauses(
            [7, 1, 2, 4, 8, 16, 32, 60, 60],
            after: [.rateLimited(retryAfter: 7), .unavailable, .networkError] + Array(repeating: .unavailable, count: 6),
            thenOnce: .unavailable)
    }

    @Test func aLongPoll429WithRetryAfterZeroPausesASecondNotZero() async throws {
        // A proxy that sends `Retry-After: 0` would otherwise make the loop ask again at once, without end.
        try await expectPauses([1, 1, 1], after: Array(repeating: .rateLimited(retryAfter: 0), count: 3), thenOnce: .unavailable)
    }

    /// A session the server refuses even after a fresh exchange (`.unauthorized`: the user must sign in again) ends the
    /// sequence with that error. Before, the loop retried it for ever, and each round asked the app's OIDC token source
    /// again, which may prompt the user.
    @Test func aRefusedSessionEndsTheSequenceInsteadOfAskingAgain() async throws {
        let (_, _, b, faults, clock) = try await Self.scriptedPair()
        faults.play([.unauthorized, .unauthorized])
        let ending = Mutex<BackupError??>(nil)
        let task = Task {
            do {
                for try await _ in b.engine.changes(waitSeconds: 20) {}
                ending.withLock { $0 = .some(nil) }
            } catch {
                ending.withLock { $0 = .some((error as? SyncError)?.backupError) }
            }
        }
        defer { task.cancel() }
        let settled = try await eventually(timeout: Self.loadedMachine) { ending.withLock { $0 != nil } || !clock.pauses.isEmpty }
        #expect(settled)
        #expect(ending.withLock { $0 } == .some(.unauthorized), "the sequence did not end with the refusal")
        #expect(clock.pauses.isEmpty, "the loop paused to ask again: \(clock.pauses)")
    }

    @Test func aServerThatAnswersLongPollsWithoutWaitingIsPausedOnNotFlooded() async throws {
        // A server or proxy that ignores `wait` answers 304 at once; the loop must back off as after failures.
        try await expectPauses(
            [1, 2, 4, 8, 16, 32, 60, 60], after: Array(repeating: .notModifiedAtOnce, count: 8),
            thenOnce: .notModifiedAtOnce)
    }

    /// A holding `{passport}` and B paired with it, B's requests going through `faults` (nothing scripted yet) and
    /// its pauses recorded by `clock`.
    private static func scriptedPair() async throws
        -> (server: InProcessServer, a: SimulatedDevice, b: SimulatedDevice, faults: ScriptedAnswers, clock: RecordingSleeps)
    {
        let server = try InProcessServer()
        let user = UUID().uuidString
        let a = try SimulatedDevice(server: server, user: user, label: "A")
        let faults = ScriptedAnswers(server.transport())
        let clock = RecordingSleeps()
        // One attempt per request: each failure the script plays reaches `changes()` as one.
        let b = try SimulatedDevice(
            baseURL: server.baseURL, user: user, label: "B", directory: nil, transport: faults, conflictHandler: nil,
            clock: clock, attempts: 1)
        _ = try await a.engine.createVault()
        try await a.set("passport", "P1")
        _ = try await a.engine.sync()
        _ = try await a.engine.pairAndConfirm(b.engine)
        return (server, a, b, faults, clock)
    }

    @Test func aRateLimitedDeviceWhoseRemoteMovedPausesInsteadOfSpinning() async throws {
        let (_, a, b, faults, clock) = try await Self.scriptedPair()
        try await b.set("card", "from B")
        faults.play([.rateLimited(retryAfter: 30)], to: .saves)
        guard case .rateLimited = try await b.engine.sync() else {
            Issue.record("expected B's push to be rate-limited")
            return
        }
        // A version B may not take in before its next attempt: every long-poll of B's finds it at once.
        try await a.set("licence", "from A")
        _ = try await a.engine.sync()
        let watcher = Self.watch(b.engine)
        defer { watcher.task.cancel() }
        let paused = try await eventually(timeout: .seconds(20)) { clock.pauses.count >= 8 }
        #expect(paused, "B's changes() made \(clock.pauses.count) pauses while it was rate-limited")
        let pauses = Array(clock.pauses.prefix(8))
        // The time left until the next attempt (under 30 s) while it is longer than the backoff step, then the step,
        // doubling to a minute.
        #expect(pauses.count == 8 && pauses.prefix(5).allSatisfy { (20...30).contains($0) }, "\(pauses)")
        #expect(Array(pauses.dropFirst(5)) == [32, 60, 60], "\(pauses)")
    }

    /// Plays `outcomes` to B's long-polls and expects `pauses`; then A's save reaches B, and one more `outcome`
    /// pauses 1 s: a long-poll that ends well starts the backoff over.
    private func expectPauses(
        _ pauses: [Double], after outcomes: [ScriptedAnswers.Outcome], thenOnce outcome: ScriptedAnswers.Outcome
    ) async throws {
        let (server, a, b, faults, clock) = try await Self.scriptedPair()
        faults.play(outcomes)
        let watcher = Self.watch(b.engine)
        defer { watcher.task.cancel() }
        // Each failure is a few hops between tasks, and the parallel run's blocked tests starve the cooperative pool:
        // the bound is a loaded machine's, not a measure (the pauses themselves are recorded, never made).
        let waited1 = try await Self.waiting(1, on: server, timeout: Self.loadedMachine)
        #expect(waited1, "B's long-poll never waited once the script was played")
        #expect(clock.pauses == pauses)
        faults.play([outcome])
        try await a.set("licence", "after the script")
        _ = try await a.engine.sync()
        var reports = watcher.reports.makeAsyncIterator()
        let report = await reports.next()
        guard case .restored? = report else {
            Issue.record("expected B to restore A's save, got \(String(describing: report))")
            return
        }
        let paused = try await eventually(timeout: Self.loadedMachine) { clock.pauses.count == pauses.count + 1 }
        let waitedAgain = try await Self.waiting(1, on: server, timeout: Self.loadedMachine)
        #expect(paused && waitedAgain, "B never long-polled again after the last outcome")
        #expect(clock.pauses.last == 1, "\(clock.pauses)")
        let licence = try await b.values()["licence"]
        #expect(licence == .string("after the script"))
    }
}

/// A `WalletClock` that tells the time and records each pause instead of making it.
private final class RecordingSleeps: WalletClock, Sendable {
    private let recorded = Mutex<[Double]>([])
    private let system = SystemWalletClock()

    /// The pauses asked for, in seconds, in order.
    var pauses: [Double] { recorded.withLock { $0 } }

    func now() -> UTCTimestamp { system.now() }

    func sleep(seconds: Double) async throws {
        try Task.checkCancellation()
        recorded.withLock { $0.append(seconds) }
        await Task.yield()
    }
}
