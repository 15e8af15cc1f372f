import Foundation
import Testing
import VaultTestSupport
import WalletVault

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 30, point 4: `VaultSyncEngine.changes()` long-polls, brings another device's save in as `sync()` does, and
/// never loses an edit made while it applies one.
@Suite("changes() delivers other devices' saves as they happen")
struct LiveChangesSDKTests {
    /// Reads `engine.changes()` on a task of its own, handing each report to the returned stream.
    static func watch(_ engine: VaultSyncEngine) -> (reports: AsyncStream<SyncReport>, task: Task<Void, any Error>) {
        let (reports, sink) = AsyncStream<SyncReport>.makeStream()
        let task = Task {
            defer { sink.finish() }
            for try await report in engine.changes(waitSeconds: 20) { sink.yield(report) }
        }
        return (reports, task)
    }

    /// Waits until `count` long-polls wait on `server`; whether they did.
    static func waiting(_ count: Int, on server: InProcessServer) async throws -> Bool {
        let metrics = server.application.metrics
        return try await eventually { metrics.waitingLongPolls == count }
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
        #expect(try await pair.b.values()["licence"] == .string("from A"))
        #expect(report?.version == (await pair.a.engine.status().syncedVersion))
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
        #expect(try await pair.b.values()["licence"] == .string("from A"), "A's save never reached B")
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
        #expect(await reports.next() == nil, "the sequence did not end")
    }
}
