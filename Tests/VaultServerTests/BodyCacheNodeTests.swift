import Foundation
import Testing
import VaultTestSupport

/// Two PostgreSQL nodes with body caches (issue 31): a node serves another node's newer save, not the version it
/// holds in a file, and an erasure on one node takes the user's bytes off the other's disk.
@Suite(.serialized, .enabled(if: TestPostgres.enabled, TestPostgres.skipMessage))
struct BodyCacheNodeTests {
    /// Two nodes of one service, each with a body cache in `body-cache` in its own directory.
    static func twoNodes() throws -> [LiveServer] {
        let url = try TestPostgres.requireURL()
        let secrets = LiveServer.Secrets.random()
        return try (0..<2).map { _ in
            try LiveServer(.init(extraConfig: ["body_cache_directory": "body-cache"], database: url, secrets: secrets))
        }
    }

    /// Whether a file in `node`'s body cache holds exactly `blob`.
    static func cacheHolds(_ blob: Data, on node: LiveServer) -> Bool {
        BodyFileListing.paths(in: node.directory.appendingPathComponent("body-cache").path).contains {
            FileManager.default.contents(atPath: $0) == blob
        }
    }

    @Test func aNodeServesAnotherNodesNewerSaveNotTheVersionItHolds() async throws {
        let nodes = try Self.twoNodes()
        let token = try await nodes[0].sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let first = try await nodes[0].save(sampleBlob("first"), token: token)
        try #require(first.status == 200)
        for _ in 0..<2 { #expect(try await nodes[1].load(token: token).body == sampleBlob("first")) }
        #expect(Self.cacheHolds(sampleBlob("first"), on: nodes[1]), "node B kept no file of the blob it loaded")
        let second = try await nodes[0].save(
            sampleBlob("second"), token: token, headers: ["If-Match": try #require(first.header("ETag"))])
        try #require(second.status == 200)
        let loaded = try await nodes[1].load(token: token)
        #expect(loaded.body == sampleBlob("second"))
        #expect(loaded.header("ETag") == second.header("ETag"))
    }

    @Test func anErasureOnOneNodeTakesTheUsersBytesOffTheOtherNodesDisk() async throws {
        let nodes = try Self.twoNodes()
        let token = try await nodes[0].sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let blob = sampleBlob("to be erased")
        try #require(try await nodes[0].save(blob, token: token).status == 200)
        for _ in 0..<2 { #expect(try await nodes[1].load(token: token).body == blob) }
        #expect(Self.cacheHolds(blob, on: nodes[1]), "node B kept no file of the blob it loaded")
        let erased = try await nodes[0].send(
            "POST", "/wallet-backup.ashx?action=delete", headers: ["Authorization": "Bearer \(token)"])
        try #require(erased.status == 200)
        let gone = try await eventually(timeout: .seconds(5)) { !Self.cacheHolds(blob, on: nodes[1]) }
        #expect(gone, "node B's cache still holds the erased user's blob")
        #expect(try await nodes[1].load(token: token).status == 404)
    }
}
