import Foundation
import VaultCore
import VaultCrypto
import VaultJOSE
import VaultHTTP
import VaultServer
import VaultStorage
import WalletVault
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real `WalletVaultService` on a fresh SQLite store, answering the SDK in process: no socket, no child process.
///
/// The SDK's requests go through the same `respond(to:)` the HTTP transport calls, so the wire contract is the
/// server's own; `transport(gate:)` lets a test hold chosen requests to act while the SDK awaits them.
public final class InProcessServer: Sendable {
    public let baseURL = URL(string: "http://in-process.test")!
    public let service: WalletVaultService

    public init(savesPerHour: Int = 1000) throws {
        var limits = ServerConfiguration.Limits()
        limits.savesPerHour = savesPerHour
        let issuerKeys = try JSONWebKeySet(json: TestIssuer.shared.jwks, allowSymmetric: false)
        let rules = JWTClaimsRules(issuer: TestIssuer.shared.issuer, audiences: [TestIssuer.shared.audience],
                                   allowedAuthorizedParties: ["oem-a", "oem-b"])
        service = WalletVaultService(
            store: try SQLiteVaultStore(path: ScratchDirectory.path("store", suffix: "sqlite"), historyVersions: 10),
            oidc: OIDCTokenVerifier(issuers: [.init(rules: rules, keys: JWKSSource(keys: issuerKeys))]),
            sessions: try SessionTokenService(issuer: "walletvault", keys: [.init(keyID: "s1", secret: SecureRandom.bytes(count: 32))]),
            storageKeys: try StorageKeyDeriver(pepper: SecureRandom.bytes(count: 32)), limits: limits, clock: SystemClock(),
            mountedIssuer: nil, logger: RequestLogger(enabled: false), metrics: ServerMetrics())
    }

    /// A transport into this server; a request `gate` is armed for waits there until the test releases it.
    public func transport(gate: RequestGate? = nil) -> any HTTPTransport {
        InProcessTransport(service: service, gate: gate)
    }
}

/// Hands each `URLRequest` to the service as the HTTP layer would, off the cooperative pool (saves block on a commit).
private struct InProcessTransport: HTTPTransport {
    public let service: WalletVaultService
    public let gate: RequestGate?

    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        await gate?.pass(request)
        let url = request.url!
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] where query[item.name] == nil { query[item.name] = item.value ?? "" }
        let incoming = HTTPRequest(method: request.httpMethod ?? "GET", path: url.path, query: query,
                                   headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody ?? Data(),
                                   remoteAddress: "127.0.0.1")
        let service = self.service
        let response = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: service.respond(to: incoming)) }
        }
        let headers = Dictionary(response.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        return (response.body, HTTPURLResponse(url: url, statusCode: response.status, httpVersion: "HTTP/1.1", headerFields: headers)!)
    }
}
