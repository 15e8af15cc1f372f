/// Why a bearer token was refused: logged for the operator, never sent to the client.
public struct AuthenticationFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The reason, naming the rule, never the token.
    public let reason: String

    /// Creates a failure.
    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
