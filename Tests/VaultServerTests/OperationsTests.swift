import Foundation
import Testing
import VaultCore
import VaultTestSupport

@Suite("Operations: health, metrics, shutdown, connection caps, TLS, proxies")
struct OperationsTests {
    @Test func healthAndMetricsCountWhatHappened() async throws {
        let server = try LiveServer(.init(savesPerHour: 2))
        #expect(try await server.send("GET", "/healthz").status == 200)
        let token = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let first = try await server.save(sampleBlob("1"), token: token)
        #expect(try await server.save(sampleBlob("2"), token: token, headers: ["If-Match": "\"2020-01-01T00:00:00.000Z\""]).status == 409)
        #expect(try await server.save(sampleBlob("3"), token: token, headers: ["If-Match": first.header("ETag")!]).status == 200)
        #expect(try await server.save(sampleBlob("4"), token: token).status == 429)
        #expect(try await server.load(token: token).status == 200)
        #expect(try await server.load(token: "nope").status == 401)

        let metrics = try await server.send("GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
        let text = String(decoding: metrics.body, as: UTF8.self)
        for line in [
            #"walletvault_http_requests_total{route="/wallet-backup.ashx",status="200"} 3"#,
            #"walletvault_http_requests_total{route="/wallet-backup.ashx",status="401"} 1"#,
            #"walletvault_http_requests_total{route="/wallet-session-token.ashx",status="200"} 1"#,
            #"walletvault_http_requests_total{route="/healthz",status="200"} 1"#,
            "walletvault_rate_limited_saves_total 1", "walletvault_conflicts_total 1", "walletvault_store_errors_total 0",
        ] {
            #expect(text.contains(line + "\n"), "\(line)")
        }
        #expect(text.contains(#"walletvault_http_request_duration_seconds_bucket{le="+Inf"} 8"#))
        let active = text.split(separator: "\n").first { $0.hasPrefix("walletvault_active_connections ") }
        #expect((active?.split(separator: " ").last).flatMap { Int($0) }.map { $0 >= 1 } == true)
    }

    @Test func sigtermFinishesTheRequestInFlightThenExitsZero() async throws {
        let server = try LiveServer()
        let token = try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: UUID().uuidString))
        let blob = sampleBlob("drain")
        let connection = try RawHTTPConnection(port: server.port)
        connection.send("POST /wallet-backup.ashx?action=save HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(blob.count)\r\nConnection: close\r\n\r\n")
        connection.send(blob.prefix(blob.count / 2))
        try await Task.sleep(for: .milliseconds(300))
        server.process.terminate()
        try await Task.sleep(for: .milliseconds(300))
        #expect(server.process.isRunning, "the server waits for the request in flight")
        // New connections are no longer accepted while draining.
        #expect(throws: (any Error).self) { _ = try RawHTTPConnection(port: server.port) }
        connection.send(blob.suffix(from: blob.count / 2))
        let reply = String(decoding: connection.receiveAll(), as: UTF8.self)
        #expect(reply.hasPrefix("HTTP/1.1 200"))
        server.process.waitUntilExit()
        #expect(server.process.terminationStatus == 0)
        // The store was closed: SQLite's write-ahead log was folded into the database file.
        let wal = server.directory.appendingPathComponent("vault.sqlite-wal").path
        let walBytes = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
        #expect(walBytes == 0)
    }

    @Test func perIPConnectionCapKeepsOthersServed() async throws {
        let server = try LiveServer(.init(extraConfig: ["limits": ["max_connections_per_ip": 4]]))
        let idle = try (0..<4).map { _ in try RawHTTPConnection(port: server.port) }
        try await Task.sleep(for: .milliseconds(200))
        let refused = try RawHTTPConnection(port: server.port)
        refused.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(refused.receiveAll().isEmpty, "a fifth connection from the same IP is closed unanswered")
        for connection in idle { connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(idle.allSatisfy { String(decoding: $0.receiveAll(), as: UTF8.self).hasPrefix("HTTP/1.1 200") })
    }

    @Test func idleConnectionsTimeOut() async throws {
        let server = try LiveServer(.init(extraConfig: ["limits": ["connection_timeout_seconds": 1]]))
        let connection = try RawHTTPConnection(port: server.port)
        connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")
        let started = Date()
        #expect(connection.receiveAll().isEmpty)
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func servesHTTPSFromPEMFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        #expect(try run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                             "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1"]).status == 0)
        let server = try LiveServer(.init(extraConfig: ["tls": ["certificate_file": certificate, "key_file": key]]))
        #expect(server.baseURL.scheme == "https")
        let result = try run("/usr/bin/curl", ["-s", "--cacert", certificate, "https://127.0.0.1:\(server.port)/healthz"])
        #expect(result.status == 0)
        #expect(result.output.contains("\"ok\""))
        let plain = try run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(server.port)/healthz"])
        #expect(plain.output != "200")
    }

    @Test func trustedProxyNamesTheClientInTheLog() async throws {
        let server = try LiveServer(.init(extraConfig: ["trusted_proxies": ["127.0.0.1"]]))
        _ = try await server.send("GET", "/healthz", headers: ["X-Forwarded-For": "203.0.113.9, 198.51.100.7"])
        try await Task.sleep(for: .milliseconds(100))
        #expect(server.log().contains(#""client":"198.51.100.7""#))

        let untrusting = try LiveServer()
        _ = try await untrusting.send("GET", "/healthz", headers: ["X-Forwarded-For": "203.0.113.9"])
        try await Task.sleep(for: .milliseconds(100))
        #expect(untrusting.log().contains(#""client":"127.0.0.1""#))
    }

    @Test func badConfigNamesTheKey() throws {
        for (config, expected) in [
            (#"{"listen":"127.0.0.1:0"}"#, "missing key database"),
            (#"{"listen":"nowhere","database":"sqlite:x","issuers":[],"session_keys_file":"a","storage_key_pepper_file":"b"}"#,
             "config key listen"),
            (#"{"listen":"127.0.0.1:0","database":"sqlite:x","issuers":[{"issuer":"i","audiences":["a"]}],"session_keys_file":"a","storage_key_pepper_file":"b"}"#,
             "exactly one of jwks_file and jwks_uri"),
            (#"{"listen":"127.0.0.1:0","database":"sqlite:x","issuers":[{"issuer":"i","jwks_file":"j","audiences":["a"]}],"session_keys_file":"a","storage_key_pepper_file":"b","limits":{"saves_per_hour":"many"}}"#,
             "limits.saves_per_hour"),
        ] {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).json")
            try Data(config.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try run(LiveServer.binary("walletvault-server").path, ["--config", file.path])
            #expect(result.status == 2)
            #expect(result.output.contains(expected), "\(result.output)")
        }
    }
}

/// Runs a command to completion, returning its exit status and combined output.
func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}
