/// The documented exit codes of `walletvault` (docs/CLI.md): scripts branch on these, so they never change meaning.
public enum ExitCode: Int32, Sendable, CaseIterable {
    /// Success.
    case ok = 0
    /// Bad arguments or input (unknown option, unreadable or malformed file, mistyped recovery code, declined prompt).
    case usage = 1
    /// The server is unreachable, failed, or answered something unexpected.
    case server = 2
    /// Both this device and another changed the same items and no decision was given (not at a terminal).
    case conflict = 3
    /// This device holds no usable key to the vault (pair or recover), or the recovery secret does not open it.
    case noAccess = 4
    /// The server's hourly save limit was hit; local changes are kept.
    case rateLimited = 5
    /// The server's vault was altered or rolled back; nothing was changed.
    case integrity = 6
    /// Not logged in, or the OIDC token was refused or could not be obtained.
    case notAuthorized = 7
    /// No vault exists yet where one is needed, or one exists where it must not (`init`).
    case vaultState = 8
    /// `inspect`: the server would refuse this blob.
    case invalidBlob = 9
    /// This device's own files could not be read or written.
    case localStorage = 10
    /// Interrupted (Ctrl-C during `demo`).
    case interrupted = 130

    /// One line per code, for `walletvault help exit-codes` and docs/CLI.md.
    public var meaning: String {
        switch self {
        case .ok: "success"
        case .usage: "bad arguments or input, or a prompt was declined"
        case .server: "server unreachable, failing, or answering unexpectedly"
        case .conflict: "the same items changed here and on another device; decide with `sync --keep` or at a terminal"
        case .noAccess: "this device cannot open the vault (pair or recover), or the recovery secret is wrong"
        case .rateLimited: "the server's hourly save limit was hit; changes are kept locally"
        case .integrity: "the server's vault was altered or rolled back; nothing was changed"
        case .notAuthorized: "not logged in, or the OIDC token was refused"
        case .vaultState: "no vault yet (init or pair), or a vault already exists (pair or recover)"
        case .invalidBlob: "inspect: the server would refuse this blob"
        case .localStorage: "this device's files could not be read or written"
        case .interrupted: "interrupted"
        }
    }
}
