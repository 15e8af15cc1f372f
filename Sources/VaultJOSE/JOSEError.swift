/// Why a JWS or a JWK was refused. The reason names fields, never token or key bytes.
public struct JOSEError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of refusal.
    public enum Code: String, Sendable {
        /// Not a compact JWS, or a part that does not decode.
        case malformed
        /// The `alg` is `none`, unknown, not allowed here, or does not fit the key.
        case algorithmNotAllowed
        /// No single key matches the token's `kid` and `alg`.
        case unknownKey
        /// A key is unusable: wrong type, use, size, curve or parameters.
        case invalidKey
        /// The signature does not verify.
        case badSignature
        /// The header asks for something this verifier does not do (`crit`, unencoded payload).
        case unsupportedHeader
    }

    /// The kind of refusal.
    public let code: Code
    /// What was wrong.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }
}
