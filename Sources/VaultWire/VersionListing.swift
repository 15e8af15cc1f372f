/// The body of `action=versions`: the kept versions, newest first, as the server writes it and the SDK reads it.
public struct VersionListing: Codable, Sendable, Equatable {
    /// One kept version.
    public struct Entry: Codable, Sendable, Equatable {
        /// The version's `sync_id`.
        public let syncID: String
        /// The blob's size.
        public let bytes: Int
        /// The blob's `updatedUtc`, as the writer stated it.
        public let updatedUtc: String
        /// The blob's `hint` (the writing device's label); written as `null` when the blob had none.
        public let hint: String?

        /// Creates an entry.
        public init(syncID: String, bytes: Int, updatedUtc: String, hint: String?) {
            self.syncID = syncID
            self.bytes = bytes
            self.updatedUtc = updatedUtc
            self.hint = hint
        }

        enum CodingKeys: String, CodingKey {
            case syncID = "sync_id"
            case bytes, updatedUtc, hint
        }

        /// Writes every member, `hint` as `null` when absent, as the OpenAPI document says.
        ///
        /// - Throws: what the encoder throws.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(syncID, forKey: .syncID)
            try container.encode(bytes, forKey: .bytes)
            try container.encode(updatedUtc, forKey: .updatedUtc)
            try container.encode(hint, forKey: .hint)
        }
    }

    /// Newest first.
    public let versions: [Entry]

    /// Creates a listing.
    public init(versions: [Entry]) {
        self.versions = versions
    }
}
