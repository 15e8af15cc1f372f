import Foundation
import Testing
import VaultCore
import VaultTestSupport

/// Health, metrics and the client address behind a proxy, in process; what needs the socket is in `OperationsTests`.
@Suite("Operations: health, metrics, proxies")
struct OperationsEndpointTests {
    @Test func healthAndMetricsCountWhatHappened() async throws {
        let server = try InProcessServer(TestServerOptions(savesPerHour: 2))
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
        // walletvault_active_connections is the transport's: OperationsTests.metricsCountOpenConnections.
    }

    @Test func trustedProxyNamesTheClientInTheLog() async throws {
        // An in-process request comes from 127.0.0.1, as a live one over loopback does.
        let server = try InProcessServer(TestServerOptions(extraConfig: ["trusted_proxies": ["127.0.0.1"]]))
        _ = try await server.send("GET", "/healthz", headers: ["X-Forwarded-For": "203.0.113.9, 198.51.100.7"])
        #expect(server.log().contains(#""client":"198.51.100.7""#))

        let untrusting = try InProcessServer(TestServerOptions())
        _ = try await untrusting.send("GET", "/healthz", headers: ["X-Forwarded-For": "203.0.113.9"])
        #expect(untrusting.log().contains(#""client":"127.0.0.1""#))
    }
}
