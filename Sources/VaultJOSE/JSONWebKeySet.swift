import Foundation
import VaultCore
import VaultJSON

/// The verification keys of one party (RFC 7517 §5), with the rules that make key choice unambiguous.
///
/// Unusable keys (for encryption, too weak, unknown type) are left out, so one odd key in an
/// issuer's JWKS does not break the others. A set that mixes shared-secret and public keys is
/// refused whole: a verifier holding both can be tricked into HMAC with a public key.
public struct JSONWebKeySet: Sendable {
    /// The usable keys.
    public let keys: [JSONWebKey]
    /// Why each left-out key was left out, for the operator's log.
    public let skipped: [JOSEError]
    /// `kid`s that more than one entry of the document claims, usable or not: never trusted.
    private let ambiguousKeyIDs: Set<String>

    /// Creates a set from keys already checked.
    public init(keys: [JSONWebKey]) {
        self.keys = keys
        self.skipped = []
        self.ambiguousKeyIDs = Self.repeated(keys.compactMap(\.keyID))
    }

    /// Reads a JWKS document `{"keys": [...]}`.
    ///
    /// - Parameter allowSymmetric: whether `oct` keys count; never for an OIDC issuer.
    /// - Throws: `JOSEError` when the document is not a JWKS or mixes key kinds.
    public init(json: Data, allowSymmetric: Bool) throws(JOSEError) {
        let document: JSONValue
        do { document = try JSONParser().parse(json) } catch { throw JOSEError(.malformed, "JWKS is not JSON: \(error.code.rawValue)") }
        guard case .array(let entries)? = document["keys"] else { throw JOSEError(.malformed, "JWKS has no keys array") }
        var keys: [JSONWebKey] = []
        var skipped: [JOSEError] = []
        for entry in entries {
            do {
                let key = try JSONWebKey(jwk: entry)
                if key.isSymmetric && !allowSymmetric {
                    skipped.append(JOSEError(.invalidKey, "shared-secret keys are not accepted here"))
                } else {
                    keys.append(key)
                }
            } catch {
                skipped.append(error)
            }
        }
        let symmetric = keys.filter(\.isSymmetric).count
        guard symmetric == 0 || symmetric == keys.count else {
            throw JOSEError(.invalidKey, "the key set mixes shared-secret and public keys")
        }
        self.keys = keys
        self.skipped = skipped
        self.ambiguousKeyIDs = Self.repeated(entries.compactMap { $0["kid"]?.stringValue })
    }

    private static func repeated(_ keyIDs: [String]) -> Set<String> {
        var seen: Set<String> = []
        return Set(keyIDs.filter { !seen.insert($0).inserted })
    }

    /// Whether a key with this `kid` is present.
    public func contains(keyID: String) -> Bool {
        keys.contains { $0.keyID == keyID }
    }

    /// The one key that may verify a token with this `kid` and `alg`.
    ///
    /// - Throws: `JOSEError.unknownKey` when none or more than one key fits (duplicate `kid`s are ambiguous).
    public func key(keyID: String?, algorithm: JWSAlgorithm) throws(JOSEError) -> JSONWebKey {
        if let keyID, ambiguousKeyIDs.contains(keyID) { throw JOSEError(.unknownKey, "several keys share the kid") }
        let candidates = keyID.map { kid in keys.filter { $0.keyID == kid } } ?? keys
        let fitting = candidates.filter { $0.algorithms.contains(algorithm) }
        guard fitting.count == 1, let key = fitting.first else {
            throw JOSEError(.unknownKey, candidates.isEmpty ? "no key with that kid" : "no single key for that kid and alg")
        }
        return key
    }
}
