import Foundation
import VaultCore
import VaultCrypto
import VaultJSON

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

    /// The fewest modulus bits an RSA JWK may have (NIST SP 800-131A); smaller keys are refused wherever they appear.
    static let minimumRSABits = 2048
    /// The most modulus bits an RSA JWK may have, as VaultCrypto accepts.
    static let maximumRSABits = 16384

    /// Reads a public JWK with exactly the members its key type requires, and checks the key before anyone trusts it
    /// or wraps to it: a P-256 point must be on the curve (each coordinate below p), an RSA modulus 2048 to 16384
    /// bits, `n` and `e` without leading zero bytes (RFC 7518 §6.3.1; a zero would also change the RFC 7638 thumbprint).
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` for another shape, key type or curve, extra members
    ///   (a private `d` among them), coordinates of the wrong length or off the curve, leading zeros, or a modulus
    ///   above 16384 bits; `.weakParameters` for an RSA modulus below 2048 bits.
    init(json: JSONValue, path: String) throws(VaultEnvelopeError) {
        guard case .object = json else { throw VaultEnvelopeError(.malformed, "\(path) must be an object") }
        let reader = MemberReader(json, path: path)
        switch try reader.string("kty") {
        case "EC":
            try reader.refuseMembers(otherThan: ["kty", "crv", "x", "y"])
            guard try reader.string("crv") == "P-256" else { throw VaultEnvelopeError(.malformed, "\(path).crv must be P-256") }
            let x = try reader.bytes("x")
            let y = try reader.bytes("y")
            guard x.count == 32, y.count == 32 else {
                throw VaultEnvelopeError(.malformed, "\(path) coordinates must be 32 bytes each")
            }
            self = .p256(x: x, y: y)
            _ = try p256Key(path: path)
        case "RSA":
            try reader.refuseMembers(otherThan: ["kty", "n", "e"])
            let n = try reader.bytes("n")
            let e = try reader.bytes("e")
            guard n.first != 0, e.first != 0 else {
                throw VaultEnvelopeError(.malformed, "\(path).n and \(path).e must have no leading zero bytes")
            }
            let bits = Self.bitLength(n)
            guard bits <= Self.maximumRSABits else {
                throw VaultEnvelopeError(.malformed, "\(path) is an RSA key above \(Self.maximumRSABits) bits")
            }
            guard bits >= Self.minimumRSABits else {
                throw VaultEnvelopeError(
                    .weakParameters, "\(path) is a \(bits)-bit RSA key; at least \(Self.minimumRSABits) bits are required")
            }
            self = .rsa(n: n, e: e)
        default:
            throw VaultEnvelopeError(.malformed, "\(path).kty must be EC or RSA")
        }
    }

    /// Whether this key may be trusted and wrapped to as it stands: a P-256 point on the curve, or an RSA key of
    /// 2048 to 16384 bits without leading zeros (what `init(json:path:)` enforces on keys read from a blob).
    var isAcceptable: Bool {
        switch self {
        case .p256:
            return (try? p256Key(path: "jwk")) != nil
        case .rsa(let n, let e):
            guard (n.first ?? 0) != 0, (e.first ?? 0) != 0 else { return false }
            return (Self.minimumRSABits...Self.maximumRSABits).contains(Self.bitLength(n))
        }
    }

    /// The position of the highest set bit of an unsigned big-endian integer (FORMAT.md §4.1's "bits").
    static func bitLength(_ integer: Data) -> Int {
        guard let top = integer.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (integer.endIndex - top) * 8 - integer[top].leadingZeroBitCount
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

    /// The RSA key this JWK describes, if a writer may wrap to it (FORMAT.md §4.1).
    ///
    /// Beyond the platform's import, `e` must be below `n`, and of at most 64 bits when `n` has more than 3072: the
    /// limits Java's RSA `KeyFactory` sets, so the Kotlin library refuses no key this SDK wraps to.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if this is not an RSA JWK or not a usable key, `.weakParameters`
    ///   below 2048 bits.
    func rsaKey(path: String) throws(VaultEnvelopeError) -> RSA.Encryption.PublicKey {
        guard case .rsa(let n, let e) = self else { throw VaultEnvelopeError(.malformed, "\(path) must be an RSA key") }
        let exponentBelowModulus = e.count < n.count || (e.count == n.count && e.lexicographicallyPrecedes(n))
        guard exponentBelowModulus, Self.bitLength(n) <= 3072 || Self.bitLength(e) <= 64 else {
            throw VaultEnvelopeError(.malformed, "\(path) is not a usable RSA public key: its exponent is too large")
        }
        do {
            return try RSA.Encryption.PublicKey(modulus: n, exponent: e)
        } catch let error as CryptoError where error.code == .weakParameters {
            throw VaultEnvelopeError(.weakParameters, "\(path) is an RSA key below 2048 bits")
        } catch {
            throw VaultEnvelopeError(.malformed, "\(path) is not a usable RSA public key")
        }
    }
}
