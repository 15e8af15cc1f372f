import VaultCore

/// Why a byte string was not accepted as JSON.
///
/// The reason comes from the parser and names a position, never the text around it, since the
/// input may be a secret.
public typealias JSONParseError = CodedError<JSONParseErrorCode>

/// The codes of `JSONParseError`, stable across releases.
public enum JSONParseErrorCode: String, Sendable {
    /// Not JSON: a syntax error, invalid UTF-8, an unrepresentable number.
    case syntax
    /// An object repeats a member name; parsers disagree on which copy wins.
    case duplicateKey
    /// Arrays and objects nest deeper than allowed.
    case tooDeep
}
