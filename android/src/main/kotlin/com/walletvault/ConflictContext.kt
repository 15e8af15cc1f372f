package com.walletvault

/** What the app decides when this device and another changed the same items (Swift `ConflictResolution`). */
enum class ConflictResolution {
    /** Keep this device's vault and save it over the cloud's. */
    KEEP_LOCAL,
    /** Keep the cloud's vault and drop this device's edits. */
    KEEP_CLOUD,
    /** Keep both sides' changes; for items both changed, the later change wins. */
    MERGE
}

/**
 * What the conflict dialog shows: every item both sides changed differently, with this device's and the cloud's
 * value, so the user compares what they would keep or lose, not only ids.
 */
class ConflictContext(
    /** The ids of the items both sides changed differently, sorted. */
    val conflictingItems: List<String>,
    /** When this device last edited (milliseconds since the epoch). */
    val localUpdated: Long,
    /** The cloud vault's `updatedUtc` (milliseconds since the epoch). */
    val cloudUpdated: Long,
    /** One entry per id of [conflictingItems], in that order. */
    val items: List<ConflictingItem>
)

/** One item both sides changed: its value here and in the cloud, null where that side deleted it. */
class ConflictingItem(
    /** The item's id. */
    val id: String,
    /** This device's value, null when this device deleted the item. */
    val local: JsonValue?,
    /** When this device changed it (milliseconds since the epoch), null when this device has no such item. */
    val localModifiedAt: Long?,
    /** The cloud's value, null when the other device deleted the item. */
    val cloud: JsonValue?,
    /** When the cloud's side changed it (milliseconds since the epoch), null when the cloud has no such item. */
    val cloudModifiedAt: Long?
)
