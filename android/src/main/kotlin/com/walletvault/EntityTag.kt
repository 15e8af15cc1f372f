package com.walletvault

/**
 * Entity tags of this API (Swift `EntityTag`): a sync id in quotes, `"2026-08-12T19:00:00.000Z"`, read as the Swift
 * client reads them, so that both SDKs take in the same answers.
 */
internal object EntityTag {
    /**
     * The sync id an `ETag` value names, in its canonical form ([UtcTime.formatted]); null unless the value is exactly
     * one tag naming an RFC 3339 sync id.
     *
     * A weak tag (`W/"…"`) is read as its strong one: a proxy that compresses an answer marks the server's tag weak, and
     * refusing it would fail every load through that proxy. A quoted text that is no sync id names no version of this
     * API: taken in, it would be echoed in the next `If-Match`, which then matches nothing or is dropped by a client
     * library as empty, so it is refused here.
     */
    fun syncId(header: String): String? {
        val tags = header.split(',').mapNotNull { item ->
            var tag = item.trim { it == ' ' || it == '\t' }
            if (tag.startsWith("W/")) tag = tag.substring(2)
            if (tag.length < 2 || !tag.startsWith("\"") || !tag.endsWith("\"")) null
            else UtcTime.parse(tag.substring(1, tag.length - 1))
        }
        // Tags that are no sync ids are dropped, as in Swift's list reading; what remains must be one.
        return tags.singleOrNull()?.let { UtcTime.formatted(it) }
    }
}
