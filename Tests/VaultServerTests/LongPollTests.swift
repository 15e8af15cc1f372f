import Foundation
import Testing
import VaultCore
import VaultTestSupport

/// Issue 30: a load with `wait` is held until the user's blob changes, on this node or another, within caps, and
/// ends at its deadline, at SIGTERM, or when its client goes.
@Suite(.serialized) struct LongPollTests {
    /// A user with one saved blob on `server`: the token and the blob's ETag.
    static func savedUser(on server: LiveServer) async throws -> (token: String, etag: String) {
        let token = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let saved = try await server.save(sampleBlob("first"), token: token)
        try #require(saved.status == 200)
        return (token, try #require(saved.header("ETag")))
    }

    /// Two nodes of one service on the test PostgreSQL database.
    static func twoPostgresNodes() throws -> [LiveServer] {
        let url = try TestPostgres.requireURL()
        let secrets = LiveServer.Secrets.random()
        return try (0..<2).map { _ in try LiveServer(.init(database: url, secrets: secrets)) }
    }

    /// A long-poll for a change from `etag`, waiting up to `seconds`.
    static func longPoll(_ server: LiveServer, token: String, etag: String, seconds: String) async throws -> APIReply {
        try await server.send(
            "GET", "/wallet-backup.ashx?action=load&wait=\(seconds)",
            headers: ["Authorization": "Bearer \(token)", "If-None-Match": etag])
    }

    /// A gauge or counter from `/metrics`.
    static func metric(_ name: String, on server: LiveServer) async throws -> Int? {
        let text = String(decoding: try await server.send("GET", "/metrics").body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    /// Waits until `count` long-polls wait on `server`.
    static func expectWaiting(_ count: Int, on server: LiveServer, _ comment: Comment) async throws {
        let waited = try await eventually { try await metric("walletvault_long_polls_waiting", on: server) == count }
        #expect(waited, comment)
    }

    @Test func aWaiterTimesOutWith304AndItsETag() async throws {
        let server = try LiveServer()
        let user = try await Self.savedUser(on: server)
        let started = ContinuousClock.now
        let reply = try await Self.longPoll(server, token: user.token, etag: user.etag, seconds: "1")
        #expect(reply.status == 304)
        #expect(reply.header("ETag") == user.etag)
        #expect(ContinuousClock.now - started >= .milliseconds(900), "a 304 before the wait passed did not wait")
        let waiting = try await Self.metric("walletvault_long_polls_waiting", on: server)
        #expect(waiting == 0)
    }

    @Test func aSaveWakesTheWaiterWithTheNewBlob() async throws {
        let server = try LiveServer()
        let user = try await Self.savedUser(on: server)
        let waiter = Task { try await Self.longPoll(server, token: user.token, etag: user.etag, seconds: "30") }
        try await Self.expectWaiting(1, on: server, "the long-poll never waited")
        let saved = try await server.save(sampleBlob("second"), token: user.token, headers: ["If-Match": user.etag])
        try #require(saved.status == 200)
        let woken = try await waiter.value
        #expect(woken.status == 200)
        #expect(woken.body == sampleBlob("second"))
        #expect(woken.header("ETag") == saved.header("ETag"))
        try await Self.expectWaiting(0, on: server, "the woken long-poll still counts as waiting")
    }

    @Test func aStaleETagIsAnsweredAtOnce() async throws {
        let server = try LiveServer()
        let user = try await Self.savedUser(on: server)
        let started = ContinuousClock.now
        let reply = try await Self.longPoll(server, token: user.token, etag: "\"2001-01-01T00:00:00.000Z\"", seconds: "30")
        #expect(reply.status == 200)
        #expect(reply.body == sampleBlob("first"))
        #expect(ContinuousClock.now - started < .seconds(25), "a changed blob must not wait")
    }

    @Test func aWaiterSeesOnlyItsOwnUsersChanges() async throws {
        let server = try LiveServer()
        let mine = try await Self.savedUser(on: server)
        let other = try await Self.savedUser(on: server)
        let reply = Task { try await Self.longPoll(server, token: mine.token, etag: mine.etag, seconds: "2") }
        try await Self.expectWaiting(1, on: server, "the long-poll never waited")
        let theirs = try await server.save(sampleBlob("theirs"), token: other.token)
        #expect(theirs.status == 200)
        let answer = try await reply.value
        #expect(answer.status == 304, "another user's save must not answer this user's long-poll")
    }

    @Test func badWaitValuesAre400InvalidWait() async throws {
        let server = try LiveServer()
        let user = try await Self.savedUser(on: server)
        for seconds in ["61", "-1", "abc", "1.5", "", "0007", "999"] {
            let reply = try await Self.longPoll(server, token: user.token, etag: user.etag, seconds: seconds)
            #expect(reply.status == 400, "wait=\(seconds)")
            #expect(reply.json["error"] as? String == "invalid_wait", "wait=\(seconds)")
        }
        let syncID = user.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        let withVersion = try await server.send(
            "GET", "/wallet-backup.ashx?action=load&wait=5&sync_id=\(syncID)", headers: ["Authorization": "Bearer \(user.token)"])
        #expect(withVersion.status == 400)
        #expect(withVersion.json["error"] as? String == "invalid_wait")
        let unauthenticated = try await server.send("GET", "/wallet-backup.ashx?action=load&wait=5", headers: ["If-None-Match": user.etag])
        #expect(unauthenticated.status == 401)
    }

    @Test func longPollsPastEitherCapAre429WithRetryAfter() async throws {
        let server = try LiveServer(.init(extraConfig: ["limits": ["long_polls_per_user": 2, "max_long_polls": 3]]))
        let nodeCap = try await Self.metric("walletvault_long_polls_limit", on: server)
        let userCap = try await Self.metric("walletvault_long_polls_per_user_limit", on: server)
        #expect(nodeCap == 3)
        #expect(userCap == 2)
        let first = try await Self.savedUser(on: server)
        let second = try await Self.savedUser(on: server)
        let held = (0..<2).map { _ in Task { try await Self.longPoll(server, token: first.token, etag: first.etag, seconds: "3") } }
        try await Self.expectWaiting(2, on: server, "the first user's two long-polls never waited")
        let thirdOfOneUser = try await Self.longPoll(server, token: first.token, etag: first.etag, seconds: "3")
        #expect(thirdOfOneUser.status == 429)
        #expect(thirdOfOneUser.json["error"] as? String == "rate_limited")
        #expect(Int(thirdOfOneUser.header("Retry-After") ?? "") ?? 0 > 0)
        let otherUsers = Task { try await Self.longPoll(server, token: second.token, etag: second.etag, seconds: "3") }
        try await Self.expectWaiting(3, on: server, "another user's long-poll was refused below the node cap")
        let pastTheNodeCap = try await Self.longPoll(server, token: second.token, etag: second.etag, seconds: "3")
        #expect(pastTheNodeCap.status == 429)
        #expect(Int(pastTheNodeCap.header("Retry-After") ?? "") ?? 0 > 0)
        let refused = try await Self.metric("walletvault_long_polls_refused_total", on: server)
        #expect(refused == 2)
        for task in held + [otherUsers] {
            let reply = try await task.value
            #expect(reply.status == 304)
        }
        try await Self.expectWaiting(0, on: server, "the long-polls that ended still count")
    }

    @Test func theIdleTimeoutAndHeaderDeadlineDoNotCutAWaiter() async throws {
        let server = try LiveServer(.init(extraConfig: ["limits": ["connection_timeout_seconds": 1, "header_timeout_seconds": 1]]))
        let user = try await Self.savedUser(on: server)
        let reply = try await Self.longPoll(server, token: user.token, etag: user.etag, seconds: "3")
        #expect(reply.status == 304, "a long-poll longer than the idle timeout was cut")
    }

    @Test func sigtermReleasesEveryWaiterAtOnceWith304() async throws {
        let server = try LiveServer()
        let user = try await Self.savedUser(on: server)
        let held = (0..<3).map { _ in Task { try await Self.longPoll(server, token: user.token, etag: user.etag, seconds: "60") } }
        try await Self.expectWaiting(3, on: server, "the long-polls never waited")
        let signalled = ContinuousClock.now
        kill(server.process.processIdentifier, SIGTERM)
        for task in held {
            let reply = try await task.value
            #expect(reply.status == 304)
            #expect(reply.header("ETag") == user.etag)
        }
        let stopped = try await eventually(timeout: .seconds(20)) { !server.process.isRunning }
        #expect(stopped, "the server never stopped")
        // The drain's grace period is 10 s and the waits 60: an exit before either means the drain did not wait for them.
        #expect(ContinuousClock.now - signalled < .seconds(9), "the drain waited for the long-polls")
    }

    @Test func aClientThatHangsUpFreesItsWaiter() async throws {
        let server = try LiveServer()
        let user = try await Self.savedUser(on: server)
        var connection: RawHTTPConnection? = try RawHTTPConnection(port: server.port)
        connection?.send(
            "GET /wallet-backup.ashx?action=load&wait=60 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(user.token)\r\n"
                + "If-None-Match: \(user.etag)\r\n\r\n")
        try await Self.expectWaiting(1, on: server, "the raw long-poll never waited")
        connection = nil
        try await Self.expectWaiting(0, on: server, "the waiter of a closed connection was not freed")
        let closed = try await eventually { try await Self.metric("walletvault_active_connections", on: server) ?? 99 <= 1 }
        #expect(closed, "the closed connection is still counted")
    }

    @Test(.enabled(if: TestPostgres.enabled, TestPostgres.skipMessage))
    func aSaveOnOneNodeWakesAWaiterOnAnotherWithinASecond() async throws {
        let nodes = try Self.twoPostgresNodes()
        let user = try await Self.savedUser(on: nodes[0])
        let waiter = Task { () throws -> (APIReply, ContinuousClock.Instant) in
            let reply = try await Self.longPoll(nodes[1], token: user.token, etag: user.etag, seconds: "30")
            return (reply, ContinuousClock.now)
        }
        try await Self.expectWaiting(1, on: nodes[1], "the long-poll on node B never waited")
        let saved = try await nodes[0].save(sampleBlob("from A"), token: user.token, headers: ["If-Match": user.etag])
        let savedAt = ContinuousClock.now
        try #require(saved.status == 200)
        let (woken, wokenAt) = try await waiter.value
        #expect(woken.status == 200)
        #expect(woken.body == sampleBlob("from A"))
        #expect(woken.header("ETag") == saved.header("ETag"))
        // Issue 30's bound: a save reaches the other node's waiter within a second (the bench measures the figure).
        #expect(wokenAt - savedAt < .seconds(1), "node B woke \(wokenAt - savedAt) after node A's save")
    }

    /// PostgreSQL stops and starts under two nodes while a long-poll waits on B: the save A makes as soon as it is
    /// back (most likely before B's listener has connected again, so B never hears its NOTIFY) still wakes B, since a
    /// listener that connects again has every waiter re-read.
    @Test(.enabled(if: TestPostgres.enabled, TestPostgres.skipMessage))
    func aWaiterIsWokenForASaveMadeWhileItsListenerWasDown() async throws {
        let nodes = try Self.twoPostgresNodes()
        let user = try await Self.savedUser(on: nodes[0])
        let waiter = Task { try await Self.longPoll(nodes[1], token: user.token, etag: user.etag, seconds: "60") }
        try await Self.expectWaiting(1, on: nodes[1], "the long-poll on node B never waited")
        try await TestPostgres.pgCtl(["stop", "-m", "fast", "-w", "-t", "60"])
        try await TestPostgres.pgCtl(["start", "-w", "-t", "60"])
        let saved = try await nodes[0].save(sampleBlob("while B was deaf"), token: user.token, headers: ["If-Match": user.etag])
        try #require(saved.status == 200, "the save after the restart: \(saved.status)")
        let woken = try await waiter.value
        #expect(woken.status == 200, "B's waiter ended \(woken.status), not with A's save")
        #expect(woken.body == sampleBlob("while B was deaf"))
    }
}
