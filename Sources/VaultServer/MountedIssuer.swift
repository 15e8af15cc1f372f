import VaultHTTP

/// An OIDC issuer this server serves itself under a path prefix and trusts beside the configured ones.
///
/// The development issuer (`VaultDevIssuer`) is the one there is; it lives in its own module so that a server built
/// without `--dev` carries no code that signs tokens for anyone.
public protocol MountedIssuer: Sendable {
    /// The prefix of every path it answers, ending in `/`.
    var pathPrefix: String { get }
    /// The paths it answers, as metrics and logs name them.
    var knownPaths: Set<String> { get }
    /// The issuer entry the token verifier trusts.
    var trustedIssuer: OIDCTokenVerifier.TrustedIssuer { get }
    /// What the server logs at startup so nobody mistakes this server for a production one.
    var startupWarning: String { get }
    /// Answers a request whose path starts with `pathPrefix`.
    ///
    /// - Throws: `APIError` for an unknown path, a wrong method or a bad form.
    func handle(_ request: HTTPRequest) throws(APIError) -> HTTPResponse
}
