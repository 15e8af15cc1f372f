/// A reason the HTTP server cannot start: the address is taken or not local, or TLS refused its credentials.
public struct HTTPServerStartError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, naming the address.
    public let reason: String

    /// Creates a start error.
    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
