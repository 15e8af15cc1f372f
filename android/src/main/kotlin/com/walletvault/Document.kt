package com.walletvault

/** The vault's plaintext: keyed items with modification times and tombstones (Swift `VaultDocument`). */
class VaultDocument(items: Map<String, Item> = emptyMap()) {
    class Item(val value: JsonValue?, val modifiedAt: Long) {
        val isDeleted: Boolean get() = value == null
        override fun equals(other: Any?) = other is Item && value == other.value && modifiedAt == other.modifiedAt
        override fun hashCode() = (value?.hashCode() ?: 0) * 31 + modifiedAt.hashCode()
    }

    val items: MutableMap<String, Item> = HashMap(items)

    val liveValues: Map<String, JsonValue> get() = items.filterValues { it.value != null }.mapValues { it.value.value!! }

    fun set(id: String, value: JsonValue, now: Long) { items[id] = Item(value, now) }
    fun delete(id: String, now: Long) { items[id] = Item(null, now) }
    fun copy() = VaultDocument(items)

    /** `{"items":{id:{"value","modified","deleted"}}}`, ids sorted, as the Swift SDK writes it. */
    val json: JsonValue.Obj
        get() = Json.obj("items" to JsonValue.Obj(items.entries.sortedBy { it.key }.map { (id, item) ->
            Pair(id, Json.obj("value" to (item.value ?: JsonValue.Null), "modified" to Json.str(UtcTime.formatted(item.modifiedAt)),
                "deleted" to JsonValue.Bool(item.isDeleted)))
        }))

    fun encoded(): ByteArray = Json.write(json)

    /**
     * This document with [other]'s content written over it as changes made at [now] (Swift `replacingContent`): items
     * whose value differs take [other]'s, items [other] lacks or deleted are deleted, so that every device takes a
     * restored version as the newest content instead of merging it away as old.
     */
    fun replacingContent(other: VaultDocument, now: Long): VaultDocument {
        val result = copy()
        for ((id, item) in other.items) if (items[id]?.value != item.value && !(item.isDeleted && items[id] == null)) result.items[id] = Item(item.value, now)
        for ((id, item) in items) if (!item.isDeleted && other.items[id]?.value == null) result.delete(id, now)
        return result
    }

    override fun equals(other: Any?) = other is VaultDocument && items == other.items
    override fun hashCode() = items.hashCode()

    companion object {
        /** Reads a document; throws IllegalArgumentException for anything that is not one. */
        fun parse(plaintext: ByteArray): VaultDocument {
            val json = try { Json.parse(plaintext) } catch (e: JsonParseError) { throw IllegalArgumentException("not JSON") }
            val items = (json.obj?.get("items") as? JsonValue.Obj) ?: throw IllegalArgumentException("items must be an object")
            val result = HashMap<String, Item>()
            for ((id, entry) in items.members) {
                val modified = entry.obj?.get("modified")?.string?.let { UtcTime.parse(it) }
                    ?: throw IllegalArgumentException("items.$id.modified must be an RFC 3339 timestamp")
                val deleted = entry.obj?.get("deleted") == JsonValue.Bool(true)
                result[id] = Item(if (deleted) null else (entry.obj?.get("value") ?: JsonValue.Null), modified)
            }
            return VaultDocument(result)
        }
    }
}

/** Three-way merge of keyed items with tombstones (Swift `ThreeWayMerge`). */
object ThreeWayMerge {
    enum class Winner { LOCAL, REMOTE, NEWEST }
    class Result(val merged: VaultDocument, val conflicts: List<String>)

    fun merge(base: VaultDocument, local: VaultDocument, remote: VaultDocument, winner: Winner = Winner.NEWEST): Result {
        val merged = VaultDocument()
        val conflicts = ArrayList<String>()
        for (id in base.items.keys + local.items.keys + remote.items.keys) {
            val ancestor = base.items[id]
            val mine = local.items[id]
            val theirs = remote.items[id]
            val chosen: VaultDocument.Item? = when {
                mine == theirs || theirs == ancestor -> mine
                mine == ancestor -> theirs
                mine?.value == theirs?.value -> if (mine == null) theirs else if (theirs == null || mine.modifiedAt >= theirs.modifiedAt) mine else theirs
                else -> {
                    conflicts.add(id)
                    when (winner) {
                        Winner.LOCAL -> mine
                        Winner.REMOTE -> theirs
                        Winner.NEWEST -> if (mine == null) theirs else if (theirs == null) mine else if (mine.modifiedAt > theirs.modifiedAt) mine else theirs
                    }
                }
            }
            if (chosen != null) merged.items[id] = chosen
        }
        return Result(merged, conflicts.sorted())
    }
}
