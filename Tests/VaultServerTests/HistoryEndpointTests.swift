import Foundation
import Testing
import VaultCore
import VaultTestSupport

@Suite("Version history, load by sync_id, erasure and readiness")
struct HistoryEndpointTests {
    @Test func versionsNewestFirstAndLoadBySyncID() async throws {
        let server = try InProcessServer(TestServerOptions(historyVersions: 3))
        let token = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let auth = ["Authorization": "Bearer \(token)"]
        var saved: [(syncID: String, blob: Data)] = []
        for index in 0..<4 {
            let blob = sampleBlob("h\(index)", hint: "device \(index)")
            let reply = try await server.save(blob, token: token)
            saved.append((try #require(reply.json["sync_id"] as? String), blob))
        }
        let listing = try await server.send("GET", "/wallet-backup.ashx?action=versions", headers: auth)
        #expect(listing.status == 200)
        let versions = try #require(listing.json["versions"] as? [[String: Any]])
        #expect(versions.map { $0["sync_id"] as? String } == [saved[3].syncID, saved[2].syncID, saved[1].syncID])
        #expect(versions.first?["bytes"] as? Int == saved[3].blob.count)
        #expect(versions.first?["hint"] as? String == "device 3")
        #expect(versions.first?["updatedUtc"] as? String == "2026-08-12T19:00:00Z")

        let old = try await server.send("GET", "/wallet-backup.ashx?action=load&sync_id=\(saved[1].syncID)", headers: auth)
        #expect(old.status == 200)
        #expect(old.body == saved[1].blob)
        #expect(old.header("ETag") == "\"\(saved[1].syncID)\"")
        #expect(try await server.send("GET", "/wallet-backup.ashx?action=load&sync_id=\(saved[0].syncID)", headers: auth).status == 404)
        let bad = try await server.send("GET", "/wallet-backup.ashx?action=load&sync_id=yesterday", headers: auth)
        #expect(bad.status == 400 && bad.json["error"] as? String == "invalid_sync_id")

        // Restoring an old version is a save of its bytes over the current one.
        let restored = try await server.save(old.body, token: token, headers: ["If-Match": "\"\(saved[3].syncID)\""])
        #expect(restored.status == 200)
        #expect(try await server.load(token: token).body == saved[1].blob)
    }

    @Test func deleteErasesEverythingButNotTheRateLimit() async throws {
        let server = try InProcessServer(TestServerOptions(savesPerHour: 2))
        let token = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let auth = ["Authorization": "Bearer \(token)"]
        #expect(try await server.save(sampleBlob("1"), token: token).status == 200)
        let second = try await server.save(sampleBlob("2"), token: token)
        for _ in 0..<2 {
            let deleted = try await server.send("POST", "/wallet-backup.ashx?action=delete", headers: auth)
            #expect(deleted.status == 200)
            #expect(deleted.json["ok"] as? Bool == true)
        }
        #expect(try await server.load(token: token).status == 404)
        let versions = try await server.send("GET", "/wallet-backup.ashx?action=versions", headers: auth)
        #expect((versions.json["versions"] as? [Any])?.isEmpty == true)
        let secondID = try #require(second.json["sync_id"] as? String)
        #expect(try await server.send("GET", "/wallet-backup.ashx?action=load&sync_id=\(secondID)", headers: auth).status == 404)
        #expect(try await server.save(sampleBlob("3"), token: token).status == 429, "erasure does not reset the hourly cap")
        #expect(try await server.send("GET", "/wallet-backup.ashx?action=delete", headers: auth).status == 405)
    }

    @Test func readiness() async throws {
        let server = try InProcessServer(TestServerOptions())
        let ready = try await server.send("GET", "/readyz")
        #expect(ready.status == 200)
        #expect(ready.json["status"] as? String == "ready")
    }
}
