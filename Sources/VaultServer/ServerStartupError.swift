/// A reason the server cannot start: a bad configuration key, an unreadable file, a busy port.
public struct ServerStartupError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the configuration key or file.
    public let reason: String

    /// Creates a startup error.
    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
