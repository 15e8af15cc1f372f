import VaultCore

/// A storage failure that is not the client's fault.
public typealias StoreError = CodedError<StoreErrorCode>

/// The codes of `StoreError`, stable across releases.
public enum StoreErrorCode: String, Sendable {
    /// The database is unreachable, busy or restarting: retry later (503).
    case unavailable
    /// The database answered in a way this server cannot handle (500).
    case corrupt
}
