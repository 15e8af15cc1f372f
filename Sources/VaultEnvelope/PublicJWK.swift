import VaultJSON
import Foundation
import VaultCore
import VaultCrypto

/// A public key as a JWK (RFC 7517): the `epk` and `jwk` members of an entry, and the source of `kek_id`
/// for public-key KEKs.
public enum PublicJWK: Sendable, Equatable {
    /// A P-256 point, each coordinate 32 bytes big-endian.
    case p256(x: Data, y: Data)
    /// An RSA key: modulus and exponent, unsigned big-endian without leading zeros.
    case rsa(n: Data, e: Data)

    /// The JWK of a P-256 public key.
    public init(_ key: P256.KeyAgreement.PublicKey) {
        let raw = key.rawRepresentation
        self = .p256(x: raw.prefix(32), y: raw.suffix(32))
    }

    /// The JWK of an RSA public key.
    public init(_ key: RSA.Encryption.PublicKey) {
        self = .rsa(n: key.modulus, e: key.exponent)
    }

    /// Reads a public JWK with exactly the members its key type requires.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` for another shape, key type or curve, extra members
    ///   (a private `d` among them), or coordinates of the wrong length.
    init(json: JSONValue, path: String) throws(VaultEnvelopeError) {
        guard case .object = json else { throw VaultEnvelopeError(.malformed, "\(path) must be an object") }
        let reader = MemberReader(json, path: path)
        switch try reader.string("kty") {
        case "EC":
            try reader.refuseMembers(otherThan: ["kty", "crv", "x", "y"])
            guard try reader.string("crv") == "P-256" else { throw VaultEnvelopeError(.malformed, "\(path).crv must be P-256") }
            let x = try reader.bytes("x"), y = try reader.bytes("y")
            guard x.count == 32, y.count == 32 else {
                throw VaultEnvelopeError(.malformed, "\(path) coordinates must be 32 bytes each")
            }
            self = .p256(x: x, y: y)
        case "RSA":
            try reader.refuseMembers(otherThan: ["kty", "n", "e"])
            self = .rsa(n: try reader.bytes("n"), e: try reader.bytes("e"))
        default:
            throw VaultEnvelopeError(.malformed, "\(path).kty must be EC or RSA")
        }
    }

    /// The JWK as JSON members in the lexicographic order RFC 7638 uses for thumbprints.
    var jsonValue: JSONValue {
        switch self {
        case .p256(let x, let y):
            .object([
                ("crv", .string("P-256")), ("kty", .string("EC")),
                ("x", .string(Base64URL.encode(x))), ("y", .string(Base64URL.encode(y))),
            ])
        case .rsa(let n, let e):
            .object([("e", .string(Base64URL.encode(e))), ("kty", .string("RSA")), ("n", .string(Base64URL.encode(n)))])
        }
    }

    /// The RFC 7638 SHA-256 thumbprint, base64url: the `kek_id` of a public-key KEK.
    public var thumbprint: String {
        Base64URL.encode(Data(SHA256.hash(data: JSONSerializer.data(of: jsonValue))))
    }

    /// The P-256 key this JWK describes.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if this is not a P-256 JWK or the point is not on the curve.
    func p256Key(path: String) throws(VaultEnvelopeError) -> P256.KeyAgreement.PublicKey {
        guard case .p256(let x, let y) = self else { throw VaultEnvelopeError(.malformed, "\(path) must be a P-256 key") }
        do {
            return try P256.KeyAgreement.PublicKey(rawRepresentation: x + y)
        } catch {
            throw VaultEnvelopeError(.malformed, "\(path) is not a point on P-256")
        }
    }

    /// The RSA key this JWK describes.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if this is not an RSA JWK, `.weakParameters` below 2048 bits.
    func rsaKey(path: String) throws(VaultEnvelopeError) -> RSA.Encryption.PublicKey {
        guard case .rsa(let n, let e) = self else { throw VaultEnvelopeError(.malformed, "\(path) must be an RSA key") }
        do {
            return try RSA.Encryption.PublicKey(modulus: n, exponent: e)
        } catch let error as CryptoError where error.code == .weakParameters {
            throw VaultEnvelopeError(.weakParameters, "\(path) is an RSA key below 2048 bits")
        } catch {
            throw VaultEnvelopeError(.malformed, "\(path) is not a usable RSA public key")
        }
    }
}
