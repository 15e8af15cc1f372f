import Foundation
import VaultCore
import VaultCrypto
import VaultJSON

/// A vault blob as the server stores it: the wrapped DEKs, the sealed contents and the header around them.
///
/// Two forms share the seed's shape. The seed's form has no `counter` member and its vault AES-GCM has no
/// additional data. The extended form (what this module writes) adds `counter`, `dek_seals` and `macs` at the top
/// level and `alg`, parameters, `label` and `created` per entry, and binds the header to the ciphertext through the
/// AES-GCM additional data (FORMAT.md §2–§5). Anchored blobs also name their vault and carry its secret (§11).
public struct VaultEnvelope: Sendable {
    /// Which of the two forms a blob has.
    public enum Form: Sendable, Hashable {
        /// Written by the seed's code: no `counter`, no additional data, entries without `alg`.
        case seed
        /// Written by this module: header authenticated, counter against rollback.
        case extended
    }

    /// The blob's form: extended exactly when it has a `counter`.
    public var form: Form { counter == nil ? .seed : .extended }
    /// `wrappedDeks`, in blob order.
    public let entries: [WrappedKey]
    /// `cipher`, `iv` and `tag`.
    public let sealedBox: AES.GCM.SealedBox
    /// `updatedUtc`, exactly as written.
    public let updatedUtc: String
    /// `updatedUtc`, parsed.
    public let updatedAt: UTCTimestamp
    /// The optional device hint.
    public let hint: String?
    /// The anti-rollback counter; nil in the seed's form.
    public let counter: UInt64?
    /// How many seals the current DEK has made, this one included; nil in the seed's form.
    public let dekSeals: UInt64?
    /// `vault_id`: which vault this blob belongs to; nil in the seed's form and in blobs from before anchors.
    public let vaultIdentifier: String?
    /// `epoch`: which vault secret is current; nil exactly when `vaultIdentifier` is.
    public let epoch: UInt64?
    /// `vault_secret`'s bytes, opened with the DEK into a `VaultIdentity`.
    let sealedVaultSecret: Data?
    /// `previous`: the version digest (`SeenVersions`) of the version this one was sealed over, which chains every
    /// version to the ones before it (FORMAT.md §11.10); nil for a vault's first version and for earlier writers.
    public let previous: Data?

    /// `macs`: one truncated HMAC per authenticated header member; nil in the seed's form.
    let macs: Data?
    /// Every member but `cipher`, `iv` and `tag`, as parsed or as written: what the AAD encodes.
    let headerMembers: [(key: String, value: JSONValue)]

    /// The header as one JSON object.
    var header: JSONValue { .object(headerMembers) }

    /// The top-level members of the extended form; anything else is refused there.
    static let extendedMembers: Set<String> = [
        "v", "wrappedDeks", "cipher", "iv", "tag", "updatedUtc", "hint", "counter", "dek_seals", "vault_id", "epoch",
        "vault_secret", "previous", "macs",
    ]
    private static let identityMembers = ["vault_id", "epoch", "vault_secret"]
    private static let sealedMembers: Set<String> = ["cipher", "iv", "tag"]

    /// Parses a blob received from the server: JSON (duplicate names refused), then the seed's shape rules, then
    /// the extended form's members if `counter` is present.
    ///
    /// Nothing is decrypted or authenticated here; `VaultOpener` does that. A text longer than `maxBytes` (the
    /// server's limit, 1 MiB by default) is refused before it is parsed.
    /// - Throws: `VaultEnvelopeError` `.blobTooLarge`, `.invalidJSON`, `.invalidShape`, `.malformed` or
    ///   `.unsupportedAlgorithm`.
    public init(parsing blob: some ContiguousBytes, maxBytes: Int = 1_048_576) throws(VaultEnvelopeError) {
        let size = blob.withUnsafeBytes { $0.count }
        guard size <= maxBytes else {
            throw VaultEnvelopeError(.blobTooLarge, "the blob is \(size) bytes; this reader accepts at most \(maxBytes)")
        }
        // `cipher` is decoded as the parser reads it: kept as text, the megabytes of a large vault would be copied
        // and scanned three more times before reaching AES-GCM.
        let json: JSONValue
        let cipher: DecodedBase64URLMember?
        do {
            (json, cipher) = try JSONParser().parse(blob, decodingBase64URLMember: "cipher")
        } catch {
            throw VaultEnvelopeError(.invalidJSON, error.reason)
        }
        let shape: VaultBlobHeader
        do {
            shape = try VaultShapeValidator().validate(json, cipher: cipher)
        } catch {
            throw VaultEnvelopeError(.invalidShape, error.detail)
        }
        guard case .object(let members) = json, case .array(let entryValues)? = json["wrappedDeks"],
            case .decoded(let ciphertext)? = cipher
        else {
            throw VaultEnvelopeError(.invalidShape, "wrappedDeks must be an array and cipher base64url")
        }
        let reader = MemberReader(json, path: "")
        // The validator has checked that iv and tag are base64url of GCM's sizes.
        let sealedBox: AES.GCM.SealedBox
        do {
            sealedBox = try AES.GCM.SealedBox(
                nonce: try AES.GCM.Nonce(data: try reader.bytes("iv")), ciphertext: ciphertext, tag: try reader.bytes("tag"))
        } catch {
            throw VaultEnvelopeError(.invalidShape, "iv must be 12 bytes and tag 16 bytes")
        }

        if json["counter"] == nil {
            // FORMAT.md §11.1: the identity members (and the chain's, §11.10) only come with the extended form.
            if let member = (Self.identityMembers + ["previous"]).first(where: { json[$0] != nil }) {
                throw VaultEnvelopeError(.malformed, "\(member) is allowed only in the extended form (with counter)")
            }
            entries = entryValues.map(WrappedKey.init(seedJSON:))
            counter = nil
            dekSeals = nil
            macs = nil
            vaultIdentifier = nil
            epoch = nil
            sealedVaultSecret = nil
            previous = nil
        } else {
            try reader.refuseMembers(otherThan: Self.extendedMembers)
            var parsed: [WrappedKey] = []
            for (index, value) in entryValues.enumerated() {
                parsed.append(try WrappedKey(extendedJSON: value, path: "wrappedDeks[\(index)]"))
            }
            guard Set(parsed.map(\.kekID)).count == parsed.count else {
                throw VaultEnvelopeError(.malformed, "wrappedDeks has two entries with the same kek_id")
            }
            entries = parsed
            counter = try reader.positiveInteger("counter")
            dekSeals = try reader.positiveInteger("dek_seals")
            let macs = try reader.bytes("macs")
            guard macs.count == HeaderAuthenticator.macsByteCount else {
                throw VaultEnvelopeError(.malformed, "macs must be \(HeaderAuthenticator.macsByteCount) bytes")
            }
            self.macs = macs
            switch Self.identityMembers.filter({ json[$0] != nil }).count {
            case 0:
                vaultIdentifier = nil
                epoch = nil
                sealedVaultSecret = nil
            case Self.identityMembers.count:
                let identifier = try reader.string("vault_id")
                guard Base64URL.decode(identifier)?.count == VaultIdentity.idByteCount else {
                    throw VaultEnvelopeError(.malformed, "vault_id must be base64url of \(VaultIdentity.idByteCount) bytes")
                }
                let epoch = try reader.positiveInteger("epoch")
                let sealed = try reader.bytes("vault_secret")
                guard sealed.count == VaultIdentity.sealedByteCount(epoch: epoch) else {
                    throw VaultEnvelopeError(
                        .malformed, "vault_secret must be \(VaultIdentity.sealedByteCount(epoch: epoch)) bytes for epoch \(epoch)")
                }
                vaultIdentifier = identifier
                self.epoch = epoch
                sealedVaultSecret = sealed
            default:
                throw VaultEnvelopeError(.malformed, "vault_id, epoch and vault_secret appear together or not at all")
            }
            if json["previous"] == nil {
                previous = nil
            } else {
                let digest = try reader.bytes("previous")
                guard vaultIdentifier != nil, digest.count == SeenVersions.digestByteCount else {
                    throw VaultEnvelopeError(
                        .malformed, "previous must be base64url of \(SeenVersions.digestByteCount) bytes, in a blob with a vault identity")
                }
                previous = digest
            }
        }
        self.sealedBox = sealedBox
        updatedUtc = shape.updatedUtc
        updatedAt = shape.updatedAt
        hint = shape.hint
        headerMembers = members.filter { !Self.sealedMembers.contains($0.key) }
    }

    /// Assembles an extended-form envelope the sealer has just made.
    init(
        entries: [WrappedKey], sealedBox: AES.GCM.SealedBox, updatedAt: UTCTimestamp, hint: String?,
        counter: UInt64, dekSeals: UInt64, identity: VaultIdentity, sealedVaultSecret: Data, previous: Data?, macs: Data,
        headerMembers: [(key: String, value: JSONValue)]
    ) {
        self.entries = entries
        self.sealedBox = sealedBox
        updatedUtc = updatedAt.description
        self.updatedAt = updatedAt
        self.hint = hint
        self.counter = counter
        self.dekSeals = dekSeals
        vaultIdentifier = identity.vaultID
        epoch = identity.epoch
        self.sealedVaultSecret = sealedVaultSecret
        self.previous = previous
        self.macs = macs
        self.headerMembers = headerMembers
    }

    /// The header members of an extended-form blob before `macs` is added, in the order the blob lists them.
    static func unauthenticatedHeader(
        entries: [WrappedKey], updatedAt: UTCTimestamp, hint: String?, counter: UInt64, dekSeals: UInt64,
        identity: VaultIdentity, sealedVaultSecret: Data, previous: Data?
    ) -> [(key: String, value: JSONValue)] {
        var members: [(key: String, value: JSONValue)] = [
            ("v", .integer(1)), ("wrappedDeks", .array(entries.map(\.jsonValue))),
            ("updatedUtc", .string(updatedAt.description)),
        ]
        if let hint { members.append(("hint", .string(hint))) }
        members += [
            ("counter", .integer(Int64(counter))), ("dek_seals", .integer(Int64(dekSeals))),
            ("vault_id", .string(identity.vaultID)), ("epoch", .integer(Int64(identity.epoch))),
            ("vault_secret", .string(Base64URL.encode(sealedVaultSecret))),
        ]
        if let previous { members.append(("previous", .string(Base64URL.encode(previous)))) }
        return members
    }

    /// The blob's JSON text: the seed's members in the seed's order, then the extended form's, and `cipher` last.
    ///
    /// A reader can take a last `cipher` without scanning its megabytes for JSON structure
    /// (`JSONParser.parse(_:decodingBase64URLMember:)` does), which makes an open of a large vault a third cheaper.
    func encoded() -> Data {
        var writer = JSONObjectWriter()
        for member in headerMembers {
            writer.append(member.key, member.value)
            if member.key == "wrappedDeks" {
                writer.appendBase64URL("iv", of: sealedBox.nonce.withUnsafeBytes { Data($0) })
                writer.appendBase64URL("tag", of: sealedBox.tag)
            }
        }
        writer.appendBase64URL("cipher", of: sealedBox.ciphertext)
        return writer.finish()
    }
}
