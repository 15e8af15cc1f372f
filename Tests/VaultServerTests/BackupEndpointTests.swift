import Foundation
import Testing
import VaultCore
import VaultHTTP
import VaultServer
import VaultTestSupport
import VaultWire

@Suite("D2 save and D3 load")
struct BackupEndpointTests {
    let server: InProcessServer
    let issuer = TestIssuer.shared

    init() throws {
        server = try InProcessServer(TestServerOptions())
    }

    func session(sub: String = UUID().uuidString, azp: String = "oem-a", from source: TestIssuer = .shared) async throws -> String {
        try await server.sessionToken(for: source.accessToken(sub: sub, azp: azp))
    }

    /// Only a GET load is held for its `wait`: a save or an erasure naming `wait` runs where every save runs, on the
    /// storage workers, and not on the connection thread it would stall for a disk sync (review of 2026-12-03, F2).
    @Test(arguments: [("POST", "save"), ("POST", "delete"), ("GET", "versions")])
    func onlyALoadIsHeldForItsWait(_ method: String, _ action: String) {
        let service = server.service
        let request = HTTPRequest(method: method, path: WirePath.backup, query: ["action": action, "wait": "0"])
        #expect(!service.mayHold(request))
        #expect(service.waitsOnStorage(request) == (method == "POST"))
        #expect(service.mayHold(HTTPRequest(method: "GET", path: WirePath.backup, query: ["action": "load", "wait": "0"])))
    }

    /// A held long-poll's log line names its user as every other backup request's does (review of 2026-12-03, F5).
    @Test func aHeldLongPollIsLoggedWithItsUser() async throws {
        let token = try await session()
        let saved = try await server.save(sampleBlob("first"), token: token)
        let etag = try #require(saved.header("ETag"))
        let waited = try await server.perform(
            "GET", "/wallet-backup.ashx?action=load&wait=1", headers: ["Authorization": "Bearer \(token)", "If-None-Match": etag],
            body: nil)
        #expect(waited.status == 304)
        // The held request's line is written once its answer went out, so it may come just after the reply.
        let backupLines = { server.log().split(separator: "\n").filter { $0.contains(#""route":"/wallet-backup.ashx""#) } }
        let logged = try await eventually { backupLines().count == 2 }
        #expect(logged, "two lines for the backup route: the save and the held load")
        let lines = backupLines()
        let user = try #require(lines.first.flatMap { $0.firstRange(of: #""user":""#).map { $0.upperBound } })
        #expect(lines.last?.contains(#""status":304"#) == true)
        #expect(lines.last?.contains(#""user":""# + lines[0][user...].prefix { $0 != "\"" }) == true)
    }

    @Test func savesAndLoadsTheExactBytes() async throws {
        let token = try await session()
        #expect(try await server.load(token: token).json["error"] as? String == "not_found")
        // Unusual but valid JSON spelling: the server must store the bytes, not a re-encoding.
        let blob = Data(String(decoding: sampleBlob("exact"), as: UTF8.self).replacingOccurrences(of: ",", with: " ,\n ").utf8)
        let saved = try await server.save(blob, token: token)
        #expect(saved.status == 200)
        #expect(saved.json["ok"] as? Bool == true)
        #expect(saved.json["bytes"] as? Int == blob.count)
        let syncID = try #require(saved.json["sync_id"] as? String)
        #expect(syncID.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
        #expect(saved.header("ETag") == "\"\(syncID)\"")

        let loaded = try await server.load(token: token)
        #expect(loaded.status == 200)
        #expect(loaded.body == blob)
        #expect(loaded.header("Content-Type") == "application/json")
        #expect(loaded.header("ETag") == "\"\(syncID)\"")

        let notModified = try await server.load(token: token, headers: ["If-None-Match": "\"\(syncID)\""])
        #expect(notModified.status == 304)
        #expect(try await server.load(token: token, headers: ["If-None-Match": "\"2020-01-01T00:00:00.000Z\""]).status == 200)
    }

    @Test func nothingStoredIs404() async throws {
        let reply = try await server.load(token: try await session())
        #expect(reply.status == 404)
        #expect(reply.json["error"] as? String == "not_found")
    }

    @Test func syncIDsStrictlyIncrease() async throws {
        let token = try await session()
        var previous = ""
        for index in 0..<8 {
            let saved = try await server.save(sampleBlob("n\(index)"), token: token)
            let syncID = try #require(saved.json["sync_id"] as? String)
            #expect(syncID > previous)
            previous = syncID
        }
    }

    @Test func oemsAndIssuersAreIsolated() async throws {
        let sub = UUID().uuidString
        let oemA = try await session(sub: sub, azp: "oem-a")
        let oemB = try await session(sub: sub, azp: "oem-b")
        let otherIssuer = try await session(sub: sub, azp: "oem-a", from: .other)
        #expect(try await server.save(sampleBlob("A"), token: oemA).status == 200)
        #expect(try await server.load(token: oemB).status == 404)
        #expect(try await server.load(token: otherIssuer).status == 404)
        #expect(try await server.save(sampleBlob("B"), token: oemB).status == 200)
        #expect(try await server.load(token: oemA).body == sampleBlob("A"))
        #expect(try await server.load(token: oemB).body == sampleBlob("B"))
    }

    @Test func onlySessionTokensOpenTheBackup() async throws {
        let oidcToken = issuer.accessToken()
        let forged = try TestIssuer.shared.signers[.es256]!.sign(payload: Data("{}".utf8), type: "wallet-session+jwt")
        for token in [oidcToken, forged, "x.y.z", ""] {
            let save = try await server.save(sampleBlob(), token: token)
            #expect(save.status == 401)
            #expect(save.header("WWW-Authenticate") == "Bearer error=\"invalid_token\"")
            #expect(try await server.load(token: token).status == 401)
        }
    }

    @Test func badBodiesGetTheirCodesAndChangeNothing() async throws {
        let token = try await session()
        let good = sampleBlob("keep")
        #expect(try await server.save(good, token: token).status == 200)
        let cases: [(Data, Int, String)] = [
            (Data("{\"v\":1,".utf8), 400, "invalid_json"),
            (Data([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]), 400, "invalid_json"),
            (Data((String(repeating: "[", count: 65) + String(repeating: "]", count: 65)).utf8), 400, "invalid_json"),
            (Data(), 400, "invalid_json"),
            (Data("[]".utf8), 400, "invalid_vault_shape"),
            (Data(#"{"v":1,"v":1}"#.utf8), 400, "invalid_vault_shape"),
            (Data(#"{"wrappedDeks":[],"cipher":"","iv":"","tag":""}"#.utf8), 400, "invalid_vault_shape"),
        ]
        for (body, status, code) in cases {
            let reply = try await server.save(body, token: token)
            #expect(reply.status == status, "\(code)")
            #expect(reply.json["error"] as? String == code)
            #expect(reply.json["message"] is String)
        }
        let shape = try await server.save(
            Data(String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"v\":1", with: "\"v\":2").utf8), token: token)
        #expect(shape.json["detail"] as? String == "v must be the integer 1")
        #expect(try await server.load(token: token).body == good)
    }

    @Test func routingErrors() async throws {
        let token = try await session()
        let auth = ["Authorization": "Bearer \(token)"]
        let unknown = try await server.send("GET", "/wallet-backup.ashx?action=delete-everything", headers: auth)
        #expect(unknown.status == 400)
        #expect(unknown.json["error"] as? String == "invalid_action")
        #expect(try await server.send("GET", "/wallet-backup.ashx", headers: auth).status == 400)
        let getSave = try await server.send("GET", "/wallet-backup.ashx?action=save", headers: auth)
        #expect(getSave.status == 405)
        #expect(getSave.header("Allow") == "POST")
        let postLoad = try await server.send("POST", "/wallet-backup.ashx?action=load", headers: auth, body: Data("{}".utf8))
        #expect(postLoad.status == 405)
        #expect(postLoad.header("Allow") == "GET, HEAD")
        // Names are case-sensitive; the auth scheme is not. (A repeated parameter is the transport's: BackupOverSocketTests.)
        #expect(try await server.send("GET", "/wallet-backup.ashx?ACTION=load", headers: auth).status == 400)
        #expect(
            try await server.send("GET", "/wallet-backup.ashx?action=load", headers: ["Authorization": "BEARER \(token)"]).status == 404)
        let missing = try await server.send("GET", "/nope")
        #expect(missing.status == 404)
        #expect(missing.json["error"] as? String == "not_found")
        #expect(try await server.send("GET", "/dev-oidc/jwks").status == 404)
    }

    @Test func compareAndSwap() async throws {
        let token = try await session()
        let first = try await server.save(sampleBlob("1"), token: token, headers: ["If-None-Match": "*"])
        #expect(first.status == 200)
        let etag = try #require(first.header("ETag"))
        let again = try await server.save(sampleBlob("x"), token: token, headers: ["If-None-Match": "*"])
        #expect(again.status == 409)
        #expect(again.json["sync_id"] as? String == etag.trimmingCharacters(in: ["\""]))
        #expect(again.json["updatedUtc"] as? String == "2026-08-12T19:00:00Z")

        let second = try await server.save(sampleBlob("2"), token: token, headers: ["If-Match": etag])
        #expect(second.status == 200)
        let stale = try await server.save(sampleBlob("3"), token: token, headers: ["If-Match": etag])
        #expect(stale.status == 409)
        #expect(stale.json["error"] as? String == "conflict")
        #expect(try await server.load(token: token).body == sampleBlob("2"))

        let fresh = try await session()
        let nothing = try await server.save(sampleBlob(), token: fresh, headers: ["If-Match": etag])
        #expect(nothing.status == 409)
        #expect(nothing.json.keys.contains("sync_id"))
        #expect(nothing.json["sync_id"] is NSNull)
        #expect(try await server.save(sampleBlob(), token: fresh, headers: ["If-None-Match": "\"x\""]).status == 400)
    }

    @Test func casRaceHasExactlyOneWinner() async throws {
        let token = try await session()
        let base = try await server.save(sampleBlob("base"), token: token)
        var etag = try #require(base.header("ETag"))
        for round in 0..<10 {
            let expected = etag
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for client in 0..<2 {
                    group.addTask {
                        let reply = try await server.save(sampleBlob("r\(round)c\(client)"), token: token, headers: ["If-Match": expected])
                        return (reply.status, reply.header("ETag"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.map(\.0).sorted() == [200, 409], "round \(round)")
            etag = try #require(statuses.first { $0.0 == 200 }?.1)
        }
    }
}

@Suite("Hourly save cap")
struct BackupLimitsTests {
    @Test func hourlyCapWithRetryAfterAndRefusalsDoNotCount() async throws {
        let server = try InProcessServer(TestServerOptions(savesPerHour: 3))
        let sub = UUID().uuidString
        let token = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: sub))
        for index in 0..<3 {
            let reply = try await server.save(sampleBlob("s\(index)"), token: token)
            #expect(reply.status == 200)
            #expect(reply.header("RateLimit-Policy") == "\"saves\";q=3;w=3600")
            #expect(reply.header("RateLimit") == "\"saves\";r=\(2 - index)")
        }
        for _ in 0..<3 {
            let limited = try await server.save(sampleBlob("late"), token: token)
            #expect(limited.status == 429)
            #expect(limited.json["error"] as? String == "rate_limited")
            let retryAfter = try #require(limited.header("Retry-After").flatMap(Int.init))
            #expect(retryAfter > 3500 && retryAfter <= 3600)
            #expect(limited.header("RateLimit")?.hasPrefix("\"saves\";r=0;t=") == true)
        }
        #expect(try await server.load(token: token).body == sampleBlob("s2"))
        // Another user has their own allowance.
        let other = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        #expect(try await server.save(sampleBlob(), token: other).status == 200)
        // The window slides: an hour on, the allowance is back (the session token has expired by then).
        server.clock.advance(seconds: 3601)
        #expect(try await server.save(sampleBlob("late"), token: token).status == 401)
        let serverNow = Date(timeIntervalSince1970: Double(server.clock.now().millisecondsSinceEpoch) / 1000)
        let later = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: sub, now: serverNow))
        let reopened = try await server.save(sampleBlob("later"), token: later)
        #expect(reopened.status == 200)
        #expect(reopened.header("RateLimit") == "\"saves\";r=2")
    }
}

/// What only the HTTP transport decides: the size cap before and while a body arrives, and query parsing.
@Suite("Size cap and query parsing, live server")
struct BackupOverSocketTests {
    @Test func capIsDecidedFromContentLengthAndWhileStreaming() async throws {
        let limit = 64 * 1024
        let server = try LiveServer(.init(maxBlobBytes: limit))
        let token = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let good = sampleBlob("keep")
        #expect(try await server.save(good, token: token).status == 200)

        func padded(to size: Int) -> Data {
            let base = String(decoding: sampleBlob("pad"), as: UTF8.self)
            let filler = size - base.utf8.count - #","pad":"""#.utf8.count
            return Data((String(base.dropLast()) + #","pad":""# + String(repeating: "p", count: filler) + "\"}").utf8)
        }
        let exact = padded(to: limit)
        #expect(exact.count == limit)
        let atLimit = try await server.save(exact, token: token)
        #expect(atLimit.status == 200)

        let over = try await server.save(padded(to: limit + 1), token: token)
        #expect(over.status == 413)
        #expect(over.json["error"] as? String == "blob_too_large")

        // No Content-Length: URLSession streams the body chunked.
        let streamed = try await server.send(
            "POST", "/wallet-backup.ashx?action=save",
            headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
            bodyStream: InputStream(data: Data(repeating: 0x20, count: limit * 4)))
        #expect(streamed.status == 413)
        #expect(try await server.load(token: token).body == exact)
    }

    @Test func aRepeatedQueryParameterKeepsItsFirstValue() async throws {
        let server = try LiveServer()
        let token = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let auth = ["Authorization": "Bearer \(token)"]
        #expect(try await server.send("GET", "/wallet-backup.ashx?action=load&action=save", headers: auth).status == 404)
        #expect(try await server.send("GET", "/wallet-backup.ashx?action=save&action=load", headers: auth).status == 405)
    }
}
