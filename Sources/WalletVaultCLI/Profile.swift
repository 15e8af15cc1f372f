import Foundation

/// What a device profile remembers between runs: the server, the device's label, and how to get an OIDC token.
///
/// No token is stored: a development token is minted again from `sub` and `azp` when needed (they last an hour),
/// and a token command is run again, so nothing on disk outlives its usefulness.
public struct Profile: Codable, Sendable, Equatable {
    /// How this profile obtains an OIDC access token.
    public struct Auth: Codable, Sendable, Equatable {
        /// `dev` (the dev server's `/dev-oidc/token`) or `command` (any command printing a token).
        public var kind: String
        /// The development subject, for `dev`.
        public var sub: String?
        /// The development authorized party (OEM client), for `dev`.
        public var azp: String?
        /// The shell command, for `command`.
        public var command: String?

        /// A development login.
        public static func dev(sub: String, azp: String) -> Auth { Auth(kind: "dev", sub: sub, azp: azp, command: nil) }
        /// A token-command login.
        public static func command(_ command: String) -> Auth { Auth(kind: "command", sub: nil, azp: nil, command: command) }

        /// How the account shows in `status`.
        var summary: String {
            kind == "dev" ? "development account \(sub ?? "?") via client \(azp ?? "?")" : "token from `\(command ?? "")`"
        }
    }

    /// The server's base URL, e.g. `http://127.0.0.1:8080`.
    public var server: String
    /// This device's label, shown in device lists and stored in the vault's `hint` and its entry.
    public var label: String
    /// How to get an OIDC access token.
    public var auth: Auth

    /// Creates a profile.
    public init(server: String, label: String, auth: Auth) {
        self.server = server
        self.label = label
        self.auth = auth
    }

    /// The server's base URL, parsed.
    var serverURL: URL? { URL(string: server) }
}
