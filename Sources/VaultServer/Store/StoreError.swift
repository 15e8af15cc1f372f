/// A storage failure that is not the client's fault.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: String, Sendable {
        /// The database is unreachable, busy or restarting: retry later (503).
        case unavailable
        /// The database answered in a way this server cannot handle (500).
        case corrupt
    }

    /// What kind of failure.
    public let code: Code
    /// The database's own message, which never contains blob bytes.
    public let reason: String

    /// Creates a store error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }
}
