import Foundation

/// The WalletVault API as a test calls it, live over a socket (`LiveServer`) or in process (`InProcessServer`).
public protocol WalletVaultAPI: Sendable {
    /// Sends one request; `pathAndQuery` is relative to the server's root.
    func perform(_ method: String, _ pathAndQuery: String, headers: [String: String], body: Data?) async throws -> APIReply
}

/// A reply other than the one a helper needs, with what the server said.
public struct UnexpectedReply: Error {
    /// The status it had.
    public let status: Int
    /// Its body as text.
    public let body: String
}

extension WalletVaultAPI {
    /// Sends one request.
    public func send(_ method: String, _ pathAndQuery: String, headers: [String: String] = [:], body: Data? = nil) async throws
        -> APIReply
    {
        try await perform(method, pathAndQuery, headers: headers, body: body)
    }

    /// D1 with a bearer access token; returns the session token.
    public func sessionToken(for accessToken: String) async throws -> String {
        let reply = try await send("POST", "/wallet-session-token.ashx", headers: ["Authorization": "Bearer \(accessToken)"])
        guard reply.status == 200, let token = reply.json["access_token"] as? String else {
            throw UnexpectedReply(status: reply.status, body: String(decoding: reply.body, as: UTF8.self))
        }
        return token
    }

    /// D2: saves `blob` with a session token.
    public func save(_ blob: Data, token: String, headers: [String: String] = [:]) async throws -> APIReply {
        try await send(
            "POST", "/wallet-backup.ashx?action=save",
            headers: headers.merging(["Authorization": "Bearer \(token)", "Content-Type": "application/json"]) { a, _ in a },
            body: blob)
    }

    /// D3: loads the blob with a session token.
    public func load(token: String, headers: [String: String] = [:]) async throws -> APIReply {
        try await send(
            "GET", "/wallet-backup.ashx?action=load",
            headers: headers.merging(["Authorization": "Bearer \(token)"]) { a, _ in a })
    }
}
