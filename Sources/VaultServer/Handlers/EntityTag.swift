import VaultCore

/// Entity tags of this API: a sync ID in quotes, `"2026-08-12T19:00:00.000Z"`.
enum EntityTag {
    /// The ETag header value for a version.
    static func header(for syncID: UTCTimestamp) -> String {
        "\"\(syncID)\""
    }

    /// Reads an `If-Match` / `If-None-Match` list: `*`, or sync IDs; nil for `*`.
    ///
    /// Tags that are not sync IDs are dropped: they can never match a stored version.
    static func list(_ header: String) -> [UTCTimestamp]? {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" { return nil }
        return trimmed.split(separator: ",").compactMap { item in
            var tag = item.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
            return UTCTimestamp(rfc3339: String(tag.dropFirst().dropLast()))
        }
    }
}
