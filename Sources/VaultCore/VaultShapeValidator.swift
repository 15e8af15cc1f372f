/// The seed's §1 blob shape, made precise: the rules the server applies before storing a blob.
///
/// The server never decrypts, so these rules are all it can check: that every field a reader
/// needs is present, of the right type and, for the GCM parameters, of the right length.
public struct VaultShapeValidator: Sendable {
    /// The most `wrappedDeks` entries a blob may carry.
    public var maxWrappedDeks = 64
    /// The most Unicode scalars (code points) `hint` may have; scalars, not grapheme clusters, so the
    /// count is stable across Unicode versions and equals JSON Schema's `maxLength`.
    public var maxHintCharacters = 256

    /// Creates a validator with the default limits.
    public init() {}

    /// The path of the first member whose name holds U+0000, at any depth (`a.b[2].c`); nil when there is none.
    ///
    /// Paths are built only on the way back from a hit, so a clean blob costs one walk and no strings.
    static func nameWithNUL(in value: JSONValue) -> String? {
        func joined(_ head: String, _ tail: String) -> String { tail.hasPrefix("[") ? head + tail : head + "." + tail }
        switch value {
        case .object(let members):
            for (key, member) in members {
                // The detail shows the NUL escaped, so it stays printable text.
                if key.utf8.contains(0) { return key.unicodeScalars.map { $0 == "\u{0}" ? "\\u0000" : String($0) }.joined() }
                if let inner = nameWithNUL(in: member) { return joined(key, inner) }
            }
            return nil
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let inner = nameWithNUL(in: element) { return inner.hasPrefix("[") ? "[\(index)]" + inner : "[\(index)]." + inner }
            }
            return nil
        default:
            return nil
        }
    }

    /// Checks a parsed blob and returns its header.
    ///
    /// - Throws: `VaultShapeError` naming the first field that breaks the rules.
    public func validate(_ blob: JSONValue) throws(VaultShapeError) -> VaultBlobHeader {
        try validate(blob, cipher: nil)
    }

    /// Checks a parsed blob whose `cipher`, when it was a string, the parser took out and decoded.
    ///
    /// `cipher` is what the parser decoded, or nil when it found no `cipher` string: then the member is looked for
    /// in `blob`, missing or of another type.
    /// - Throws: `VaultShapeError` naming the first field that breaks the rules.
    public func validate(_ blob: JSONValue, cipher: DecodedBase64URLMember?) throws(VaultShapeError) -> VaultBlobHeader {
        guard case .object = blob else { throw VaultShapeError("top level must be an object, not \(blob.typeName)") }
        // RFC 8259 allows U+0000 in a member name, but a reader on C strings sees `"v\u0000"` as a second `v`:
        // the very ambiguity the duplicate-name rule exists for, so no name anywhere may hold one.
        if let path = Self.nameWithNUL(in: blob) {
            throw VaultShapeError("a member name contains U+0000 (\(path))")
        }
        guard let version = blob["v"] else { throw VaultShapeError("v is missing") }
        guard version == .integer(1) else { throw VaultShapeError("v must be the integer 1") }

        guard let wrapped = blob["wrappedDeks"] else { throw VaultShapeError("wrappedDeks is missing") }
        guard case .array(let entries) = wrapped else { throw VaultShapeError("wrappedDeks must be an array") }
        guard !entries.isEmpty else { throw VaultShapeError("wrappedDeks must not be empty") }
        guard entries.count <= maxWrappedDeks else {
            throw VaultShapeError("wrappedDeks has \(entries.count) entries, at most \(maxWrappedDeks) allowed")
        }
        var kekIDs: [String] = []
        for (index, entry) in entries.enumerated() {
            let path = "wrappedDeks[\(index)]"
            guard case .object = entry else { throw VaultShapeError("\(path) must be an object") }
            guard let kekID = entry["kek_id"]?.stringValue, !kekID.isEmpty else {
                throw VaultShapeError("\(path).kek_id must be a non-empty string")
            }
            _ = try base64URLField(entry, "dek_cipher", path: "\(path).dek_cipher")
            kekIDs.append(kekID)
        }

        let cipherByteCount: Int
        switch cipher {
        case .some(.decoded(let bytes)): cipherByteCount = bytes.count
        case .some(.notBase64URL): throw VaultShapeError(Self.notBase64URL(path: "cipher"))
        case .none: cipherByteCount = try base64URLField(blob, "cipher", path: "cipher")
        }
        try fixedLengthField(blob, "iv", bytes: 12)
        try fixedLengthField(blob, "tag", bytes: 16)

        guard let updatedUtc = blob["updatedUtc"] else { throw VaultShapeError("updatedUtc is missing") }
        guard let updatedText = updatedUtc.stringValue, let updatedAt = UTCTimestamp(rfc3339: updatedText) else {
            throw VaultShapeError("updatedUtc must be an RFC 3339 timestamp in UTC")
        }

        var hint: String?
        if let hintValue = blob["hint"] {
            guard let text = hintValue.stringValue else { throw VaultShapeError("hint must be a string") }
            guard text.unicodeScalars.count <= maxHintCharacters else {
                throw VaultShapeError("hint must have at most \(maxHintCharacters) characters")
            }
            // The hint is stored beside the blob as text: PostgreSQL's text type cannot hold U+0000 (the save failed
            // on every retry) and SQLite's C-string bind ended the hint there.
            guard !text.unicodeScalars.contains("\u{0}") else { throw VaultShapeError("hint must not contain U+0000") }
            hint = text
        }
        return VaultBlobHeader(
            updatedUtc: updatedText, updatedAt: updatedAt, hint: hint, kekIDs: kekIDs, cipherByteCount: cipherByteCount)
    }

    /// The decoded length of a base64url member; checked, never decoded, since the server only needs the size.
    private func base64URLField(_ object: JSONValue, _ name: String, path: String) throws(VaultShapeError) -> Int {
        guard let value = object[name] else { throw VaultShapeError("\(path) is missing") }
        guard let text = value.stringValue else { throw VaultShapeError("\(path) must be a string") }
        guard let byteCount = Base64URL.decodedCount(ofValid: text) else { throw VaultShapeError(Self.notBase64URL(path: path)) }
        return byteCount
    }

    private static func notBase64URL(path: String) -> String { "\(path) must be unpadded base64url (RFC 4648 §5)" }

    private func fixedLengthField(_ object: JSONValue, _ name: String, bytes: Int) throws(VaultShapeError) {
        let byteCount = try base64URLField(object, name, path: name)
        guard byteCount == bytes else {
            throw VaultShapeError("\(name) must decode to exactly \(bytes) bytes, not \(byteCount)")
        }
    }
}
