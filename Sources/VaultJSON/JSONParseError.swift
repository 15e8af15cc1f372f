/// Why a byte string was not accepted as JSON.
///
/// The reason comes from the parser and names a position, never the text around it, since the
/// input may be a secret.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Sendable {
        /// Not JSON: a syntax error, invalid UTF-8, an unrepresentable number.
        case syntax
        /// An object repeats a member name; parsers disagree on which copy wins.
        case duplicateKey
        /// Arrays and objects nest deeper than allowed.
        case tooDeep
    }

    /// The kind of failure.
    public let code: Code
    /// A human-readable reason with a position.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }
}
