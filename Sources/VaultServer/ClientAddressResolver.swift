import Foundation
import VaultHTTP

/// Decides which IP address a request comes from, trusting `X-Forwarded-For` only from known proxies.
///
/// The rightmost address that is not a trusted proxy is the client: every proxy appends the
/// peer it saw, so entries left of it may be forged by the client itself.
struct ClientAddressResolver: Sendable {
    let trustedProxies: Set<String>

    init(trustedProxies: [String]) {
        self.trustedProxies = Set(trustedProxies)
    }

    func client(of request: HTTPRequest) -> String? {
        guard let peer = request.remoteAddress, trustedProxies.contains(peer),
            let forwarded = request.header("x-forwarded-for")
        else { return request.remoteAddress }
        let hops = forwarded.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let client = hops.last { !trustedProxies.contains($0) } ?? hops.first ?? peer
        // Header text is attacker-chosen: keep only what an IP address can contain.
        let cleaned = String(client.prefix(45).filter { $0.isHexDigit || $0 == "." || $0 == ":" })
        return cleaned.isEmpty ? peer : cleaned
    }
}
