import Foundation
import Testing
import VaultCore
import VaultServer
import VaultTestSupport

/// A `--dev` server whose `/dev-oidc/` issuer plays the remote IdP: its JWKS URL, its tokens, and its
/// metrics counting how often the JWKS was fetched.
final class DevIssuerHost: @unchecked Sendable {
    let process = Process()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("devidp-\(UUID().uuidString)")
    let base: String

    init() throws {
        process.executableURL = LiveServer.binary("walletvault-server")
        process.arguments = ["--dev", "--quiet", "--listen", "127.0.0.1:0", "--data-dir", directory.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([0x0A]) { line.append(byte) }
        base = String(String(decoding: line, as: UTF8.self).split(separator: " ").last ?? "")
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    func token(sub: String) throws -> String {
        try run("/usr/bin/curl", ["-s", "-X", "POST", "\(base)/dev-oidc/token", "-d", "sub=\(sub)", "-d", "azp=oem-a"])
            .output.split(separator: "\"").drop { $0 != "access_token" }.dropFirst(2).first.map(String.init) ?? ""
    }

    var fetches: Int {
        let metrics = (try? run("/usr/bin/curl", ["-s", "\(base)/metrics"]).output) ?? ""
        let line = metrics.split(separator: "\n").first {
            $0.hasPrefix(#"walletvault_http_requests_total{route="/dev-oidc/jwks",status="200"}"#)
        }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }
}

/// The server under test runs in process on a manual clock; the issuer it fetches keys from is a real HTTP server.
@Suite("Issuer keys from a jwks_uri")
struct JWKSURITests {
    @Test func fetchedOnFirstUseAndRefetchedAtMostOncePerMinuteOnUnknownKid() async throws {
        let idp = try DevIssuerHost()
        let server = try InProcessServer(
            TestServerOptions(extraConfig: [
                "issuers": [
                    [
                        "issuer": "urn:walletvault:dev-oidc", "jwks_uri": "\(idp.base)/dev-oidc/jwks", "audiences": ["walletvault-dev"],
                        "allowed_azp": ["oem-a"],
                    ]
                ]
            ]),
            // Frozen: the minute between fetches is counted on this clock alone, however slowly the machine runs.
            clock: ManualClock(start: SystemClock().now()))
        func mint(_ token: String) async throws -> Int {
            try await server.send("POST", "/wallet-session-token.ashx", headers: ["Authorization": "Bearer \(token)"]).status
        }
        #expect(idp.fetches == 0, "nothing is fetched before a token needs it")
        #expect(try await mint(try idp.token(sub: "alice")) == 200)
        #expect(try await mint(try idp.token(sub: "bob")) == 200)
        #expect(idp.fetches == 1, "a known kid is served from the cache")

        // A kid the cache lacks triggers a refetch at most once a minute: the first fetch was seconds ago.
        let claims = #"{"iss":"urn:walletvault:dev-oidc","aud":"walletvault-dev","sub":"x","azp":"oem-a","exp":9999999999}"#
        let stranger = try TestIssuer.other.signers[.rs256]!.sign(payload: Data(claims.utf8), type: "at+jwt")
        #expect(try await mint(stranger) == 401)
        let afterUnknown = idp.fetches
        #expect(afterUnknown == 1)
        for _ in 0..<5 { #expect(try await mint(stranger) == 401) }
        #expect(idp.fetches == afterUnknown, "unknown kids cannot make the server hammer the issuer")
        #expect(try await mint(try idp.token(sub: "carol")) == 200)

        // Once a minute has passed, an unknown kid may fetch again, once.
        server.clock.advance(seconds: 59)
        #expect(try await mint(stranger) == 401)
        #expect(idp.fetches == afterUnknown, "not before the minute is up")
        server.clock.advance(seconds: 1)
        for _ in 0..<3 { #expect(try await mint(stranger) == 401) }
        #expect(idp.fetches == afterUnknown + 1)
        #expect(try await mint(try idp.token(sub: "dave")) == 200)
    }
}
