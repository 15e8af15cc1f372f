import Foundation
import VaultCore
import VaultCrypto

/// One entry of `wrappedDeks`: the DEK wrapped for one key-encryption key, with what unwrapping needs.
public struct WrappedKey: Sendable, Equatable {
    /// How the DEK was wrapped, with the parameters each algorithm needs; inconsistent combinations cannot be built.
    public enum Scheme: Sendable, Equatable {
        /// An entry in the seed's form: no `alg`, so the key that matches `kek_id` decides. For the seed's two
        /// schemes `dek_cipher` is the AES-GCM IV ‖ ciphertext ‖ tag (12 + 32 + 16 bytes).
        case seed
        /// `A256KW`: RFC 3394 over the DEK (40 bytes), with a key from `source`.
        case a256kw(KeySource)
        /// `A256GCMKW`: AES-256-GCM over the DEK (32 bytes), IV and tag in the `iv` and `tag` members.
        case a256gcmkw(iv: Data, tag: Data)
        /// `RSA-OAEP-256`, with the recipient's public key in `jwk` so any member can re-wrap.
        case rsaOAEP256(recipient: PublicJWK)
        /// `ECDH-ES+A256KW`: the ephemeral key in `epk`, the recipient's static key in `jwk`.
        case ecdhESA256KW(ephemeral: PublicJWK, recipient: PublicJWK)
        /// `WV-ECDH-SELF+A256GCMKW`: the seed's iOS scheme, `dek_cipher` laid out as in the seed.
        case selfECDH
    }

    /// Where the AES key of an `A256KW` entry comes from (the `kdf` member).
    public enum KeySource: Sendable, Equatable {
        /// A stored random key; no `kdf` member.
        case stored
        /// HKDF-SHA256 over a recovery code (`"kdf": "HKDF-SHA256"`).
        case recoveryCode
        /// Argon2id over a passphrase (`"kdf": "Argon2id"`, with `salt`, `m`, `t`, `p`).
        case passphrase(salt: Data, costs: Argon2idCosts)
    }

    /// The stable, non-secret id of the key that wrapped the DEK.
    public let kekID: String
    /// `dek_cipher`: the wrapped DEK.
    public let encryptedKey: Data
    /// The algorithm and its parameters.
    public let scheme: Scheme
    /// A name for people ("Pixel 8", "Recovery code"); nil only in the seed's form.
    public let label: String?
    /// When this entry was first enrolled; nil only in the seed's form.
    public let created: UTCTimestamp?

    /// Creates an entry.
    public init(kekID: String, encryptedKey: Data, scheme: Scheme, label: String?, created: UTCTimestamp?) {
        self.kekID = kekID
        self.encryptedKey = encryptedKey
        self.scheme = scheme
        self.label = label
        self.created = created
    }

    /// The entry's `alg`; nil in the seed's form.
    public var algorithm: KeyWrapAlgorithm? {
        switch scheme {
        case .seed: nil
        case .a256kw: .a256kw
        case .a256gcmkw: .a256gcmkw
        case .rsaOAEP256: .rsaOAEP256
        case .ecdhESA256KW: .ecdhESA256KW
        case .selfECDH: .selfECDH
        }
    }

    /// The raw P-256 public key (X ‖ Y, 64 bytes) this entry is wrapped to, where its members name one: the recipient
    /// of an ECDH-ES entry, or the key a self-ECDH entry's `kek_id` spells (as the seed's iOS entries do); nil
    /// otherwise. Two entries with the same key open for the same holder.
    public var p256RecipientKey: Data? {
        switch scheme {
        case .ecdhESA256KW(_, .p256(let x, let y)): return x + y
        case .selfECDH, .seed:
            guard let raw = Base64URL.decode(kekID), raw.count == 64 else { return nil }
            return raw
        default: return nil
        }
    }

    /// The same wrapped key under another label and enrollment time, as the sealer stamps it.
    func labeled(_ label: String, created: UTCTimestamp) -> WrappedKey {
        WrappedKey(kekID: kekID, encryptedKey: encryptedKey, scheme: scheme, label: label, created: created)
    }

    /// The most Unicode code points (scalars, not grapheme clusters) a label may have, as for `hint`.
    static let maxLabelCharacters = 256

    // MARK: JSON

    /// The entry as JSON: `kek_id` and `dek_cipher` first (the seed's members), then `alg`, parameters, `label`, `created`.
    var jsonValue: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("kek_id", .string(kekID)), ("dek_cipher", .string(Base64URL.encode(encryptedKey))),
        ]
        if let algorithm { members.append(("alg", .string(algorithm.rawValue))) }
        switch scheme {
        case .seed, .selfECDH, .a256kw(.stored):
            break
        case .a256kw(.recoveryCode):
            members.append(("kdf", .string("HKDF-SHA256")))
        case .a256kw(.passphrase(let salt, let costs)):
            members += [
                ("kdf", .string("Argon2id")), ("salt", .string(Base64URL.encode(salt))),
                ("m", .integer(Int64(costs.memoryKiB))), ("t", .integer(Int64(costs.iterations))),
                ("p", .integer(Int64(costs.parallelism))),
            ]
        case .a256gcmkw(let iv, let tag):
            members += [("iv", .string(Base64URL.encode(iv))), ("tag", .string(Base64URL.encode(tag)))]
        case .rsaOAEP256(let recipient):
            members.append(("jwk", recipient.jsonValue))
        case .ecdhESA256KW(let ephemeral, let recipient):
            members += [("epk", ephemeral.jsonValue), ("jwk", recipient.jsonValue)]
        }
        if let label { members.append(("label", .string(label))) }
        if let created { members.append(("created", .string(created.description))) }
        return .object(members)
    }

    /// Reads an entry of a seed-form blob: only `kek_id` and `dek_cipher` mean anything there.
    ///
    /// The shape validator has already checked both members, so this cannot fail.
    init(seedJSON entry: JSONValue) {
        self.init(
            kekID: entry["kek_id"]?.stringValue ?? "",
            encryptedKey: entry["dek_cipher"]?.stringValue.flatMap(Base64URL.decode) ?? Data(),
            scheme: .seed, label: nil, created: nil
        )
    }

    /// Reads an entry of an extended-form blob, strictly: every member its `alg` needs, no other member,
    /// each binary member of the length its algorithm fixes.
    ///
    /// - Throws: `VaultEnvelopeError` `.unsupportedAlgorithm` for an unknown `alg`, `.malformed` for anything else.
    init(extendedJSON entry: JSONValue, path: String) throws(VaultEnvelopeError) {
        let reader = MemberReader(entry, path: path)
        let algorithmName = try reader.string("alg")
        guard let algorithm = KeyWrapAlgorithm(rawValue: algorithmName) else {
            throw VaultEnvelopeError(.unsupportedAlgorithm, "\(path).alg names an algorithm this reader does not implement")
        }
        let encryptedKey = try reader.bytes("dek_cipher")
        var allowed: Set<String> = ["kek_id", "dek_cipher", "alg", "label", "created"]
        let scheme: Scheme
        // A symmetric entry may wrap a bound payload (`WrapBinding`), 24 bytes longer than a DEK.
        let expectedLengths: [Int]
        switch algorithm {
        case .a256kw:
            expectedLengths = [40, 64]
            switch try reader.optionalString("kdf") {
            case nil:
                scheme = .a256kw(.stored)
            case "HKDF-SHA256":
                allowed.insert("kdf")
                scheme = .a256kw(.recoveryCode)
            case "Argon2id":
                allowed.formUnion(["kdf", "salt", "m", "t", "p"])
                let salt = try reader.bytes("salt")
                guard salt.count >= 16 else { throw VaultEnvelopeError(.malformed, "\(path).salt must be at least 16 bytes") }
                let costs = Argon2idCosts(memoryKiB: try reader.int("m"), iterations: try reader.int("t"), parallelism: try reader.int("p"))
                scheme = .a256kw(.passphrase(salt: salt, costs: costs))
            default:
                throw VaultEnvelopeError(.unsupportedAlgorithm, "\(path).kdf names a derivation this reader does not implement")
            }
        case .a256gcmkw:
            expectedLengths = [32, 56]
            allowed.formUnion(["iv", "tag"])
            let iv = try reader.bytes("iv")
            let tag = try reader.bytes("tag")
            guard iv.count == AES.GCM.Nonce.byteCount, tag.count == AES.GCM.SealedBox.tagByteCount else {
                throw VaultEnvelopeError(.malformed, "\(path).iv must be 12 bytes and \(path).tag 16 bytes")
            }
            scheme = .a256gcmkw(iv: iv, tag: tag)
        case .rsaOAEP256:
            allowed.insert("jwk")
            let recipient = try PublicJWK(json: try reader.member("jwk"), path: "\(path).jwk")
            guard case .rsa(let modulus, _) = recipient else {
                throw VaultEnvelopeError(.malformed, "\(path).jwk must be an RSA key")
            }
            expectedLengths = [modulus.count]
            scheme = .rsaOAEP256(recipient: recipient)
        case .ecdhESA256KW:
            expectedLengths = [40]
            allowed.formUnion(["epk", "jwk"])
            let ephemeral = try PublicJWK(json: try reader.member("epk"), path: "\(path).epk")
            let recipient = try PublicJWK(json: try reader.member("jwk"), path: "\(path).jwk")
            guard case .p256 = ephemeral, case .p256 = recipient else {
                throw VaultEnvelopeError(.malformed, "\(path).epk and \(path).jwk must be P-256 keys")
            }
            scheme = .ecdhESA256KW(ephemeral: ephemeral, recipient: recipient)
        case .selfECDH:
            expectedLengths = [60, 84]
            scheme = .selfECDH
        }
        guard expectedLengths.contains(encryptedKey.count) else {
            let lengths = expectedLengths.map(String.init).joined(separator: " or ")
            throw VaultEnvelopeError(.malformed, "\(path).dek_cipher must be \(lengths) bytes for \(algorithm.rawValue)")
        }
        try reader.refuseMembers(otherThan: allowed)
        let label = try reader.string("label")
        // Code points, as the server counts `hint` and JSON Schema's maxLength counts: grapheme clusters change
        // with Unicode versions and differ between platforms.
        guard label.unicodeScalars.count <= Self.maxLabelCharacters else {
            throw VaultEnvelopeError(.malformed, "\(path).label must have at most \(Self.maxLabelCharacters) code points")
        }
        guard let created = UTCTimestamp(rfc3339: try reader.string("created")) else {
            throw VaultEnvelopeError(.malformed, "\(path).created must be an RFC 3339 timestamp in UTC")
        }
        let kekID = try reader.string("kek_id")
        // A public-key entry names its key twice: a `jwk` that is not the key `kek_id` names would let whoever edited
        // the entry receive every DEK a rotating writer re-wraps to it (FORMAT.md §4.1, §6).
        switch scheme {
        case .rsaOAEP256(let recipient), .ecdhESA256KW(_, let recipient):
            guard kekID == recipient.thumbprint else {
                throw VaultEnvelopeError(.malformed, "\(path).kek_id is not the RFC 7638 thumbprint of \(path).jwk")
            }
        default:
            break
        }
        self.init(kekID: kekID, encryptedKey: encryptedKey, scheme: scheme, label: label, created: created)
    }
}

extension WrappedKey {
    /// Finds the entry of `entries` that the first of `keys` with an entry can unwrap, and unwraps the DEK.
    ///
    /// The first key whose `kek_id` some entry carries decides; later keys are not tried (FORMAT.md §8 step 4).
    /// In the extended form `kek_id`s are unique, so that is one entry, and a key of another `alg` than the entry's
    /// fails with `.unwrapFailed`. In the seed form several entries may carry one `kek_id` (every seed-era Android
    /// device used the alias `vault-kek`): they are tried in blob order until one unwraps.
    /// - Throws: `VaultEnvelopeError` `.noMatchingKey` if no key has an entry; otherwise what the key's `unwrap`
    ///   throws for the last entry tried (`.unwrapFailed`), or at once for anything but `.unwrapFailed`
    ///   (`.invalidated`, `.userCanceled`, ...).
    static func unwrapDEK(from entries: [WrappedKey], form: VaultEnvelope.Form, keys: [any KeyEncryptionKey]) async throws
        -> (key: any KeyEncryptionKey, entry: WrappedKey, dek: SymmetricKey, binding: WrapBinding?, symmetric: Bool)
    {
        for key in keys {
            let candidates = entries.filter { $0.kekID == key.kekID }
            guard !candidates.isEmpty else { continue }
            var lastFailure: VaultEnvelopeError?
            for entry in form == .seed ? candidates : [candidates[0]] {
                do {
                    // A seed-form entry names no algorithm: the key that unwrapped it says.
                    let symmetric = (entry.algorithm ?? key.algorithm).authenticatesWriter
                    let (dek, binding) = try WrapBinding.split(try await key.unwrap(entry), symmetric: symmetric)
                    return (key, entry, dek, binding, symmetric)
                } catch let error as VaultEnvelopeError where error.code == .unwrapFailed && form == .seed {
                    lastFailure = error
                }
            }
            throw lastFailure!
        }
        throw VaultEnvelopeError(.noMatchingKey, "none of the \(keys.count) keys has an entry")
    }
}
