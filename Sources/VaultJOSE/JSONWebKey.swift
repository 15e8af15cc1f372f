import Foundation
import VaultCore
import VaultCrypto

/// One verification key from a JWK (RFC 7517), checked so that the key alone decides the algorithm.
public struct JSONWebKey: Sendable {
    /// The key material with the algorithms it can verify.
    public enum Material: Sendable {
        case rsa(RSA.Signing.PublicKey)
        case p256(P256.Signing.PublicKey)
        case hmac(SymmetricKey)
    }

    /// The `kid`, if any.
    public let keyID: String?
    /// The key material.
    public let material: Material
    /// The algorithms this key may verify: its `alg` if stated, else every algorithm of its type.
    public let algorithms: Set<JWSAlgorithm>
    /// A shared secret, keyed once for every token this key checks.
    private let keyedMAC: KeyedHMAC?

    /// Creates a key from material; `algorithm` narrows it to one algorithm.
    public init(keyID: String?, material: Material, algorithm: JWSAlgorithm? = nil) {
        self.keyID = keyID
        self.material = material
        if case .hmac(let secret) = material { keyedMAC = KeyedHMAC(key: secret) } else { keyedMAC = nil }
        let natural: Set<JWSAlgorithm> =
            switch material {
            case .rsa: [.rs256, .ps256]
            case .p256: [.es256]
            case .hmac: [.hs256]
            }
        self.algorithms = algorithm.map { natural.intersection([$0]) } ?? natural
    }

    /// Reads a JWK, refusing keys that are not for signatures or are too weak.
    ///
    /// - Throws: `JOSEError.invalidKey` naming what is wrong.
    public init(jwk: JSONValue) throws(JOSEError) {
        guard case .object = jwk else { throw JOSEError(.invalidKey, "a JWK must be an object") }
        if let use = jwk["use"], use != .string("sig") { throw JOSEError(.invalidKey, "use is not sig") }
        if let operations = jwk["key_ops"] {
            guard case .array(let list) = operations, list.contains(.string("verify")) else {
                throw JOSEError(.invalidKey, "key_ops does not include verify")
            }
        }
        var algorithm: JWSAlgorithm?
        if let alg = jwk["alg"] {
            guard let name = alg.stringValue, let known = JWSAlgorithm(rawValue: name) else {
                throw JOSEError(.invalidKey, "alg is not a supported signature algorithm")
            }
            algorithm = known
        }
        let material: Material
        switch jwk["kty"]?.stringValue {
        case "RSA":
            let modulus = try Self.bytes(jwk, "n")
            let exponent = try Self.bytes(jwk, "e")
            // An exponent of 1 makes every "signature" equal its message; tiny even ones are not RSA.
            let significant = exponent.drop { $0 == 0 }
            let isOdd = (significant.last ?? 0) & 1 == 1
            let atLeastThree = significant.count > 1 || (significant.last ?? 0) >= 3
            guard isOdd, atLeastThree else { throw JOSEError(.invalidKey, "RSA exponent must be odd and at least 3") }
            guard !RSAModulusCheck.hasROCAFingerprint(modulus) else {
                throw JOSEError(.invalidKey, "RSA modulus has the ROCA fingerprint (CVE-2017-15361)")
            }
            do {
                material = .rsa(try RSA.Signing.PublicKey(modulus: modulus, exponent: exponent))
            } catch {
                throw JOSEError(.invalidKey, "RSA key refused: \((error as? CryptoError)?.code.rawValue ?? "invalid")")
            }
        case "EC":
            guard jwk["crv"] == .string("P-256") else { throw JOSEError(.invalidKey, "only the P-256 curve is supported") }
            let x = try Self.bytes(jwk, "x")
            let y = try Self.bytes(jwk, "y")
            guard x.count == 32, y.count == 32 else { throw JOSEError(.invalidKey, "P-256 coordinates must be 32 bytes") }
            do {
                material = .p256(try P256.Signing.PublicKey(rawRepresentation: x + y))
            } catch {
                throw JOSEError(.invalidKey, "P-256 point refused: \((error as? CryptoError)?.code.rawValue ?? "invalid")")
            }
        case "oct":
            let secret = try Self.bytes(jwk, "k")
            // RFC 7518 §3.2: an HS256 key must be at least as long as the hash output.
            guard secret.count >= 32 else { throw JOSEError(.invalidKey, "HMAC key shorter than 32 bytes") }
            material = .hmac(SymmetricKey(data: secret))
        default:
            throw JOSEError(.invalidKey, "kty is missing or unsupported")
        }
        self.init(keyID: jwk["kid"]?.stringValue, material: material, algorithm: algorithm)
        guard !algorithms.isEmpty else { throw JOSEError(.invalidKey, "alg does not fit the key type") }
    }

    /// Whether this is a shared-secret key.
    public var isSymmetric: Bool {
        if case .hmac = material { return true }
        return false
    }

    /// Verifies a signature over `signingInput` with `algorithm`, which the caller has matched to this key.
    func isValidSignature(_ signature: Data, for signingInput: Data, algorithm: JWSAlgorithm) -> Bool {
        switch (material, algorithm) {
        case (.rsa(let key), .rs256): key.isValidSignature(signature, for: signingInput, padding: .pkcs1v1_5)
        case (.rsa(let key), .ps256): key.isValidSignature(signature, for: signingInput, padding: .pss)
        case (.p256(let key), .es256):
            // JOSE carries r||s, exactly 64 bytes; DER or other lengths are not ES256 signatures.
            signature.count == 64
                && (try? P256.Signing.ECDSASignature(rawRepresentation: signature)).map {
                    key.isValidSignature($0, for: signingInput)
                } == true
        case (.hmac(let key), .hs256):
            keyedMAC?.isValid(signature, for: signingInput)
                ?? HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: key)
        default: false
        }
    }

    private static func bytes(_ jwk: JSONValue, _ name: String) throws(JOSEError) -> Data {
        guard let text = jwk[name]?.stringValue, let bytes = Base64URL.decode(text) else {
            throw JOSEError(.invalidKey, "\(name) is missing or not base64url")
        }
        return bytes
    }
}
