import VaultCore

/// The plaintext of a vault as the sync engine merges it: keyed items, each with its own
/// modification time, and tombstones for deleted items so a deletion can win a merge.
public struct VaultDocument: Sendable, Equatable {
    /// One item of the vault (a credential, a setting).
    public struct Item: Sendable, Equatable {
        /// The item's content; nil for a tombstone.
        public var value: JSONValue?
        /// When this device or another last changed it.
        public var modifiedAt: UTCTimestamp

        /// Creates an item; a nil value is a tombstone.
        public init(value: JSONValue?, modifiedAt: UTCTimestamp) {
            self.value = value
            self.modifiedAt = modifiedAt
        }

        /// Whether the item was deleted.
        public var isDeleted: Bool { value == nil }
    }

    /// The items by identifier, tombstones included.
    public var items: [String: Item]

    /// Creates a document.
    public init(items: [String: Item] = [:]) {
        self.items = items
    }

    /// The live items' values, without tombstones.
    public var liveValues: [String: JSONValue] {
        items.compactMapValues(\.value)
    }

    /// Sets or replaces an item's value at `now`.
    public mutating func set(_ id: String, to value: JSONValue, at now: UTCTimestamp) {
        items[id] = Item(value: value, modifiedAt: now)
    }

    /// Deletes an item at `now`, leaving a tombstone.
    public mutating func delete(_ id: String, at now: UTCTimestamp) {
        items[id] = Item(value: nil, modifiedAt: now)
    }

    /// This document with `other`'s live content, as changes made at `now`: items whose value differs take
    /// `other`'s, live items `other` lacks are deleted, equal items keep their stamps.
    public func replacingContent(with other: VaultDocument, at now: UTCTimestamp) -> VaultDocument {
        var result = self
        for (id, item) in other.items where items[id]?.value != item.value && !(item.isDeleted && items[id] == nil) {
            result.items[id] = Item(value: item.value, modifiedAt: now)
        }
        for (id, item) in items where !item.isDeleted && other.items[id]?.value == nil {
            result.delete(id, at: now)
        }
        return result
    }

    /// The document as JSON: `{"items": {"<id>": {"value": ..., "modified": "<RFC 3339>"}}}`.
    public var json: JSONValue {
        .object([
            (
                "items",
                .object(
                    items.sorted { $0.key < $1.key }.map { id, item in
                        (
                            id,
                            .object([
                                ("value", item.value ?? .null), ("modified", .string(item.modifiedAt.description)),
                                ("deleted", .bool(item.isDeleted)),
                            ])
                        )
                    })
            )
        ])
    }

    /// Reads a document from its JSON form.
    ///
    /// - Throws: `VaultShapeError` naming the first malformed item.
    public init(json: JSONValue) throws(VaultShapeError) {
        guard case .object(let members)? = json["items"] else { throw VaultShapeError("items must be an object") }
        var items: [String: Item] = [:]
        for (id, entry) in members {
            guard let modified = entry["modified"]?.stringValue.flatMap(UTCTimestamp.init(rfc3339:)) else {
                throw VaultShapeError("items.\(id).modified must be an RFC 3339 timestamp")
            }
            let deleted = entry["deleted"] == .bool(true)
            items[id] = Item(value: deleted ? nil : (entry["value"] ?? .null), modifiedAt: modified)
        }
        self.items = items
    }
}
