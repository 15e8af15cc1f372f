import Foundation
import VaultCore
import VaultCrypto
import VaultJSON

/// A private or shared key that produces compact JWS tokens.
public struct JWSSigner: Sendable {
    /// The key material and the algorithm it signs with.
    public enum Key: Sendable {
        case hmac(SymmetricKey)
        case rsa(RSA.Signing.PrivateKey, JWSAlgorithm)
        case p256(P256.Signing.PrivateKey)
    }

    /// The `kid` written into every header.
    public let keyID: String
    /// The key.
    public let key: Key
    /// An HMAC key, keyed once for every token this signer signs.
    private let keyedMAC: KeyedHMAC?

    /// Creates a signer.
    public init(keyID: String, key: Key) {
        self.keyID = keyID
        self.key = key
        if case .hmac(let secret) = key { keyedMAC = KeyedHMAC(key: secret) } else { keyedMAC = nil }
    }

    /// The algorithm this signer writes.
    public var algorithm: JWSAlgorithm {
        switch key {
        case .hmac: .hs256
        case .rsa(_, let algorithm): algorithm
        case .p256: .es256
        }
    }

    /// Signs a payload under a header of `alg`, `kid`, `typ` and any extra members.
    ///
    /// - Throws: `CryptoError` when the key cannot sign.
    public func sign(payload: Data, type: String?, extraHeader: [String: String] = [:]) throws -> String {
        let members: [(String, JSONValue)]
        if extraHeader.isEmpty {
            // Already in sorted order: alg, kid, typ.
            members = [("alg", .string(algorithm.rawValue)), ("kid", .string(keyID))] + (type.map { [("typ", .string($0))] } ?? [])
        } else {
            var header = extraHeader
            header["alg"] = algorithm.rawValue
            header["kid"] = keyID
            header["typ"] = type
            members = header.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }
        }
        // Sorted as JSONEncoder's .sortedKeys wrote them. PortableJSONSerializer writes what jansson writes, byte for
        // byte, at a fraction of its cost for a few short members (no node per value, no second dump to size the text).
        let headerJSON = PortableJSONSerializer.data(of: .object(members))
        let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(payload)
        let input = Data(signingInput.utf8)
        let signature: Data =
            switch key {
            case .hmac(let secret): keyedMAC?.code(for: input) ?? HMAC<SHA256>.authenticationCode(for: input, using: secret)
            case .rsa(let privateKey, .ps256): try privateKey.signature(for: input, padding: .pss)
            case .rsa(let privateKey, _): try privateKey.signature(for: input, padding: .pkcs1v1_5)
            case .p256(let privateKey): try privateKey.signature(for: input).rawRepresentation
            }
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// The public JWK of an asymmetric signer, for publishing in a JWKS; nil for HMAC.
    public var publicJWK: [String: String]? {
        switch key {
        case .hmac: return nil
        case .rsa(let privateKey, let algorithm):
            return [
                "kty": "RSA", "kid": keyID, "use": "sig", "alg": algorithm.rawValue,
                "n": Base64URL.encode(privateKey.publicKey.modulus), "e": Base64URL.encode(privateKey.publicKey.exponent),
            ]
        case .p256(let privateKey):
            let raw = privateKey.publicKey.rawRepresentation
            return [
                "kty": "EC", "kid": keyID, "use": "sig", "alg": "ES256", "crv": "P-256",
                "x": Base64URL.encode(raw.prefix(32)), "y": Base64URL.encode(raw.suffix(32)),
            ]
        }
    }
}
