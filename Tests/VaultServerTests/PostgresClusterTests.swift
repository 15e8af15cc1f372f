import Foundation
import Testing
import VaultCore
import VaultTestSupport

/// Two `walletvault-server` processes on one PostgreSQL database: what must hold across nodes.
@Suite("Two nodes on one PostgreSQL database", .enabled(if: TestPostgres.enabled, TestPostgres.skipMessage))
struct PostgresClusterTests {
    /// Two nodes of one service: same database, session keys and pepper.
    func nodes(savesPerHour: Int = 60) throws -> [LiveServer] {
        let url = try TestPostgres.requireURL()
        let secrets = LiveServer.Secrets.random()
        return try (0..<2).map { _ in
            try LiveServer(.init(savesPerHour: savesPerHour, database: url, secrets: secrets))
        }
    }

    /// Sends `count` saves at once, alternating nodes; returns (index, reply) pairs.
    func saveConcurrently(
        _ nodes: [LiveServer], count: Int, token: String, headers: [String: String],
        blob: @escaping @Sendable (Int) -> Data
    ) async throws -> [(Int, APIReply)] {
        try await withThrowingTaskGroup(of: (Int, APIReply).self) { group in
            for index in 0..<count {
                let node = nodes[index % nodes.count]
                group.addTask { (index, try await node.save(blob(index), token: token, headers: headers)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test func compareAndSwapHasExactlyOneWinnerAcrossNodes() async throws {
        let nodes = try nodes()
        let token = try await nodes[0].sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        var etag: String?
        for round in 0..<5 {
            let precondition = etag.map { ["If-Match": $0] } ?? ["If-None-Match": "*"]
            let replies = try await saveConcurrently(nodes, count: 10, token: token, headers: precondition) {
                sampleBlob("r\(round)-\($0)")
            }
            #expect(replies.allSatisfy { [200, 409].contains($0.1.status) }, "round \(round): \(replies.map(\.1.status))")
            let winners = replies.filter { $0.1.status == 200 }
            try #require(winners.count == 1, "round \(round): \(winners.count) winners")
            let winnerTag = try #require(winners[0].1.header("ETag"))
            etag = winnerTag
            for node in nodes {
                let loaded = try await node.load(token: token)
                #expect(loaded.body == sampleBlob("r\(round)-\(winners[0].0)"))
                #expect(loaded.header("ETag") == etag)
            }
        }
    }

    @Test func oneUsersHourlyCapHoldsAcrossNodes() async throws {
        let nodes = try nodes(savesPerHour: 5)
        let token = try await nodes[0].sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let replies = try await saveConcurrently(nodes, count: 16, token: token, headers: [:]) { sampleBlob("c\($0)") }
        #expect(replies.filter { $0.1.status == 200 }.count == 5, "\(replies.map(\.1.status))")
        #expect(replies.filter { $0.1.status == 429 }.count == 11)
        for node in nodes {
            let refused = try await node.save(sampleBlob("late"), token: token)
            #expect(refused.status == 429)
            #expect(Int(refused.header("Retry-After") ?? "") ?? 0 > 3000)
        }
        // Another user on the same nodes has a quota of their own.
        let other = try await nodes[1].sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        #expect(try await nodes[0].save(sampleBlob("o"), token: other).status == 200)
    }
}
