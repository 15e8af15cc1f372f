/// The paths of the API, as the seed names them (D1, D2/D3) plus the operations endpoints.
public enum WirePath {
    /// D1: trades an OIDC access token for a session token (`POST`).
    public static let sessionToken = "/wallet-session-token.ashx"
    /// D2 and D3: the backup's actions, chosen by the `action` query argument.
    public static let backup = "/wallet-backup.ashx"
    /// Liveness: 200 while the process serves.
    public static let health = "/healthz"
    /// Readiness: 200 while storage is reachable, else 503 `unavailable`.
    public static let ready = "/readyz"
    /// Prometheus text.
    public static let metrics = "/metrics"
}

/// Query argument and body member names both sides spell.
public enum WireName {
    /// The query argument choosing a backup action.
    public static let action = "action"
    /// The query argument naming a kept version on load, and the body member naming a version.
    public static let syncID = "sync_id"
    /// The query argument of a load that waits for a change: seconds to hold the request (a long-poll).
    public static let wait = "wait"
    /// The body member naming the stored version's `updatedUtc` in a 409.
    public static let updatedUtc = "updatedUtc"
    /// The error body's code member.
    public static let error = "error"
    /// The error body's human-readable member.
    public static let message = "message"
    /// The 400 `invalid_vault_shape` body's member naming what is wrong.
    public static let detail = "detail"
}
