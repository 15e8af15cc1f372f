import VaultCore

/// Why a JWS or a JWK was refused. The reason names fields, never token or key bytes.
public typealias JOSEError = CodedError<JOSEErrorCode>

/// The codes of `JOSEError`, stable across releases.
public enum JOSEErrorCode: String, Sendable {
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
