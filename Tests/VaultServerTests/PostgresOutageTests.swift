import Foundation
import Synchronization
import Testing
import VaultCore
import VaultStorage
import VaultTestSupport

@testable import VaultServer

/// PostgreSQL stops under traffic and comes back: the server answers 503 meanwhile and recovers alone.
@Suite("PostgreSQL outage", .enabled(if: TestPostgres.enabled, TestPostgres.skipMessage))
struct PostgresOutageTests {
    /// What each save attempt got, by user and by outage phase.
    final class Traffic: Sendable {
        enum Phase: Sendable { case up, down, back }

        struct Attempt: Sendable {
            let user: Int
            let phase: Phase
            let status: Int?
            let retryAfter: String?
            let syncID: String?
            let body: Data
            let failure: String?
        }

        private let state = Mutex<(phase: Phase, stop: Bool, attempts: [Attempt])>((.up, false, []))

        var phase: Phase {
            get { state.withLock { $0.phase } }
            set { state.withLock { $0.phase = newValue } }
        }
        var stop: Bool {
            get { state.withLock { $0.stop } }
            set { state.withLock { $0.stop = newValue } }
        }
        var attempts: [Attempt] { state.withLock { $0.attempts } }

        func record(user: Int, status: Int?, retryAfter: String?, syncID: String?, body: Data, failure: String?) {
            state.withLock {
                $0.attempts.append(
                    Attempt(
                        user: user, phase: $0.phase, status: status, retryAfter: retryAfter,
                        syncID: syncID, body: body, failure: failure))
            }
        }

        func count(_ phase: Phase, status: Int, user: Int? = nil) -> Int {
            attempts.filter { $0.phase == phase && $0.status == status && (user == nil || $0.user == user) }.count
        }
    }

    /// Issue 29, finding 10: a node left idle while PostgreSQL restarted holds pooled connections the restart killed;
    /// its first saves must go out on fresh ones (200), not fail on the dead ones (503 57P01).
    @Test(arguments: ["fast", "immediate"])
    func firstSavesAfterARestartUnderAnIdleNodeAre200(stopMode: String) async throws {
        let url = try TestPostgres.requireURL()
        let server = try LiveServer(.init(savesPerHour: 1_000_000, database: url, historyVersions: 1000))
        let users = (0..<6).map { _ in UUID().uuidString }
        var tokens: [String] = []
        for user in users { tokens.append(try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: user))) }
        // Saves side by side, so the pool holds several connections, all of which the restart kills.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for (user, token) in tokens.enumerated() {
                group.addTask { try await server.save(sampleBlob("before-\(user)"), token: token).status }
            }
            for try await status in group { #expect(status == 200) }
        }
        try await TestPostgres.pgCtl(["restart", "-m", stopMode, "-w", "-t", "60"])
        for (user, token) in tokens.enumerated() {
            let reply = try await server.save(sampleBlob("after-\(user)"), token: token)
            #expect(reply.status == 200, "save \(user) after the restart: \(reply.status) \(reply.json["message"] ?? "")")
        }
        #expect(try await server.send("GET", "/readyz").status == 200)
    }

    @Test(arguments: ["fast", "immediate"])
    func answers503WhileDownLosesNoAcknowledgedSaveAndRecovers(stopMode: String) async throws {
        let url = try TestPostgres.requireURL()
        let secrets = LiveServer.Secrets.random()
        let server = try LiveServer(.init(savesPerHour: 1_000_000, database: url, historyVersions: 1000, secrets: secrets))
        let users = (0..<4).map { _ in UUID().uuidString }
        var tokens: [String] = []
        for user in users { tokens.append(try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: user))) }
        let traffic = Traffic()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for (user, token) in tokens.enumerated() {
                group.addTask {
                    for sequence in 0..<20_000 where !traffic.stop {
                        let body = sampleBlob("u\(user)-\(sequence)", cipherBytes: 2048)
                        do {
                            let reply = try await server.save(body, token: token)
                            traffic.record(
                                user: user, status: reply.status, retryAfter: reply.header("Retry-After"),
                                syncID: reply.json["sync_id"] as? String, body: body, failure: nil)
                            // A client's pause before it retries a refused save: part of the traffic (no spinning on
                            // 503s while PostgreSQL is down), not a wait for anything.
                            if reply.status != 200 { try await Task.sleep(for: .milliseconds(20)) }
                        } catch {
                            traffic.record(user: user, status: nil, retryAfter: nil, syncID: nil, body: body, failure: "\(error)")
                        }
                    }
                }
            }
            defer { traffic.stop = true }

            let warmedUp = try await eventually(timeout: .seconds(15)) {
                (0..<users.count).allSatisfy { traffic.count(.up, status: 200, user: $0) >= 3 }
            }
            try #require(warmedUp, "saves did not get going before the outage")
            traffic.phase = .down
            try await TestPostgres.pgCtl(["stop", "-m", stopMode, "-w", "-t", "60"])
            let saw503s = try await eventually(timeout: .seconds(15)) { traffic.count(.down, status: 503) >= 12 }
            #expect(saw503s, "expected 503s while PostgreSQL is down")
            #expect(server.process.isRunning)
            let notReady = try await server.send("GET", "/readyz")
            #expect(notReady.status == 503 && notReady.json["error"] as? String == "unavailable")
            #expect(try await server.send("GET", "/healthz").status == 200, "alive while not ready")
            try await TestPostgres.pgCtl(["start", "-w", "-t", "60"])
            traffic.phase = .back
            let recovered = try await eventually(timeout: .seconds(30)) {
                (0..<users.count).allSatisfy { traffic.count(.back, status: 200, user: $0) >= 2 }
            }
            #expect(recovered, "the server did not recover after PostgreSQL came back; its log ends: \(server.log().suffix(3000))")
            #expect(try await server.send("GET", "/readyz").status == 200)
            traffic.stop = true
            try await group.waitForAll()
        }

        let attempts = traffic.attempts
        #expect(attempts.allSatisfy { $0.failure == nil }, "\(attempts.compactMap(\.failure).prefix(3))")
        let statuses = Set(attempts.compactMap(\.status))
        #expect(statuses.isSubset(of: [200, 503]), "statuses \(statuses.sorted())")
        #expect(attempts.filter { $0.status == 503 }.allSatisfy { $0.retryAfter != nil })
        #expect(server.process.isRunning)

        // Every acknowledged save is in the database with its exact bytes, and the last one is current.
        let store = try PostgresVaultStore(url: url, poolSize: 2, historyVersions: 1000)
        let keys = try StorageKeyDeriver(pepper: secrets.pepper)
        for (user, subject) in users.enumerated() {
            let key = keys.key(issuer: TestIssuer.shared.issuer, authorizedParty: "oem-a", subject: subject)
            let acknowledged = attempts.filter { $0.user == user && $0.status == 200 }
            for attempt in acknowledged {
                let syncID = try #require(attempt.syncID.flatMap(UTCTimestamp.init(rfc3339:)))
                #expect(try store.load(key, syncID: syncID)?.body == attempt.body, "user \(user) lost \(attempt.syncID ?? "")")
            }
            #expect(try await server.load(token: tokens[user]).body == acknowledged.last?.body)
        }
    }
}
