import VaultCore

/// Entity tags of this API: a sync ID in quotes, `"2026-08-12T19:00:00.000Z"`.
public enum EntityTag {
    /// The `ETag` (or `If-Match`) value for a version.
    public static func header(for syncID: UTCTimestamp) -> String {
        "\"\(syncID)\""
    }

    /// The sync ID an `ETag` value names, nil when it is not one quoted sync ID.
    public static func syncID(_ header: String) -> UTCTimestamp? {
        guard let tags = list(header), tags.count == 1 else { return nil }
        return tags[0]
    }

    /// Reads an `If-Match` / `If-None-Match` list: `*`, or sync IDs; nil for `*`.
    ///
    /// Tags that are not sync IDs are dropped: they can never match a stored version.
    public static func list(_ header: String) -> [UTCTimestamp]? {
        let trimmed = withoutWhitespace(Substring(header))
        if trimmed == "*" { return nil }
        return trimmed.split(separator: ",").compactMap { item in
            var tag = withoutWhitespace(item)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
            return UTCTimestamp(rfc3339: String(tag.dropFirst().dropLast()))
        }
    }

    /// Drops RFC 9110's optional whitespace (spaces and tabs) around a list element.
    private static func withoutWhitespace(_ text: Substring) -> Substring {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isWhitespace($0) }), let last = text.lastIndex(where: { !isWhitespace($0) })
        else { return "" }
        return text[first...last]
    }
}
