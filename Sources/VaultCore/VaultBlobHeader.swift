/// What the server may know about a stored blob: its shape-checked, non-secret header fields.
public struct VaultBlobHeader: Sendable, Hashable {
    /// The blob's `updatedUtc`, exactly as sent.
    public let updatedUtc: String
    /// The parsed `updatedUtc`.
    public let updatedAt: UTCTimestamp
    /// The optional device hint.
    public let hint: String?
    /// The `kek_id` of every wrapped DEK, in order.
    public let kekIDs: [String]
    /// The decoded length of `cipher` in bytes.
    public let cipherByteCount: Int

    /// Creates a header.
    public init(updatedUtc: String, updatedAt: UTCTimestamp, hint: String?, kekIDs: [String], cipherByteCount: Int) {
        self.updatedUtc = updatedUtc
        self.updatedAt = updatedAt
        self.hint = hint
        self.kekIDs = kekIDs
        self.cipherByteCount = cipherByteCount
    }
}
