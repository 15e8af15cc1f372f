package com.walletvault

import java.util.concurrent.ConcurrentHashMap

/** Remembers the highest counter accepted per vault (FORMAT.md §8 step 3, §9). */
interface CounterStore {
    fun highest(vaultId: String): Long
    /** Raises the stored counter to [counter]; never lowers it. */
    fun advance(vaultId: String, counter: Long)
}

class InMemoryCounterStore : CounterStore {
    private val counters = ConcurrentHashMap<String, Long>()
    override fun highest(vaultId: String): Long = counters[vaultId] ?: 0
    override fun advance(vaultId: String, counter: Long) { counters.merge(vaultId, counter) { a, b -> maxOf(a, b) } }
}

/** What an open or a seal leaves for the next seal: the DEK, the entries, the counters. */
class VaultState internal constructor(
    val vaultId: String,
    val envelope: VaultEnvelope,
    val entries: List<WrappedKey>,
    internal val dek: ByteArray
) {
    /** A copy of the DEK (secret): for writing test vectors and for tools; apps never need it. */
    fun exportDek(): ByteArray = dek.copyOf()
    val counter: Long get() = envelope.counter ?: 0
    val dekSeals: Long get() = envelope.dekSeals ?: 0
    internal fun withEntries(entries: List<WrappedKey>) = VaultState(vaultId, envelope, entries, dek)
}

class OpenedVault(val plaintext: ByteArray, val state: VaultState)

/** Opens blobs of either form with the checks of FORMAT.md §8, in its order. */
class VaultOpener(private val counters: CounterStore) {
    suspend fun open(blob: ByteArray, vaultId: String, keys: List<KeyEncryptionKey>): OpenedVault =
        open(VaultEnvelope.parse(blob), vaultId, keys)

    suspend fun open(envelope: VaultEnvelope, vaultId: String, keys: List<KeyEncryptionKey>): OpenedVault {
        // Step 3, before any key is touched: a replayed blob never prompts the user.
        val highest = counters.highest(vaultId)
        val counter = envelope.counter
        if (counter != null && counter < highest) throw VaultException.Rollback("blob counter $counter is below $highest, already accepted for this vault")
        if (counter == null && highest > 0) throw VaultException.Rollback("a seed-form blob (no counter) after counter $highest was accepted")
        // Step 4: the first key with an entry; entries for keys this device does not hold are skipped.
        var match: Pair<KeyEncryptionKey, WrappedKey>? = null
        loop@ for (key in keys) {
            for (entry in envelope.entries) if (entry.kekId == key.kekId) { match = Pair(key, entry); break@loop }
        }
        val (key, entry) = match ?: throw VaultException.NoMatchingKey("none of the ${keys.size} keys has an entry")
        val dek = key.unwrap(entry)
        val plaintext: ByteArray
        if (counter != null) {
            HeaderAuthenticator(dek).verify(envelope.macs!!, envelope.header)
            plaintext = Crypto.gcmOpen(dek, envelope.iv, envelope.ciphertext + envelope.tag, HeaderAuthenticator.additionalData(envelope.header))
                ?: throw VaultException.CiphertextAltered("the vault ciphertext, IV or tag does not verify")
            counters.advance(vaultId, counter)
        } else {
            plaintext = Crypto.gcmOpen(dek, envelope.iv, envelope.ciphertext + envelope.tag, null)
                ?: throw VaultException.CiphertextAltered("the vault ciphertext, IV or tag does not verify")
        }
        return OpenedVault(plaintext, VaultState(vaultId, envelope, envelope.entries, dek))
    }
}

/** A recipient with its entry's label. */
class Recipient(val key: KeyWrapping, val label: String)

/** An entry a DEK rotation could not re-wrap. */
data class SkippedEntry(val kekId: String, val label: String, val reason: String)

class SealedVault(val blob: ByteArray, val state: VaultState, val skipped: List<SkippedEntry>? = null)

/** Writes blobs in the extended form (FORMAT.md §9), or in the seed form for the seed's readers. */
class VaultSealer(
    private val counters: CounterStore,
    val hint: String? = null,
    val maxBlobBytes: Int = 1_048_576,
    val dekRotationThreshold: Long = 1L shl 24,
    private val clock: () -> Long = { UtcTime.now() }
) {
    suspend fun create(plaintext: ByteArray, vaultId: String, recipients: List<Recipient>): SealedVault {
        val dek = Crypto.randomBytes(32)
        val now = UtcTime.format(clock())
        val entries = recipients.map { it.key.wrap(dek).labeled(it.label, now) }
        return write(plaintext, dek, entries, vaultId, 0, 1, null)
    }

    /** The next version with the same DEK, rotating it first when due (seed form, or 2^24 seals). */
    suspend fun seal(plaintext: ByteArray, over: VaultState, keys: List<KeyWrapping> = emptyList(), allowingPrompts: Boolean = false): SealedVault {
        if (!over.envelope.isExtended || over.dekSeals >= dekRotationThreshold) return rotateDek(plaintext, over, keys, allowingPrompts)
        return write(plaintext, over.dek, over.entries, over.vaultId, over.counter, over.dekSeals + 1, null)
    }

    /** A fresh DEK, re-wrapped for every entry a key in [keys] or the entry's own `jwk` can wrap. */
    suspend fun rotateDek(plaintext: ByteArray, over: VaultState, keys: List<KeyWrapping>, allowingPrompts: Boolean = false): SealedVault {
        val dek = Crypto.randomBytes(32)
        val now = UtcTime.format(clock())
        val entries = ArrayList<WrappedKey>()
        val skipped = ArrayList<SkippedEntry>()
        for (entry in over.entries) {
            val label = entry.label ?: over.envelope.hint ?: ""
            val key = keys.firstOrNull { it.kekId == entry.kekId } ?: PublicKeyRecipient.of(entry)
            if (key == null) { skipped.add(SkippedEntry(entry.kekId, label, "keyNotAvailable")); continue }
            if (!key.canWrapWithoutHolder && !allowingPrompts) { skipped.add(SkippedEntry(entry.kekId, label, "needsHolder")); continue }
            try {
                entries.add(key.wrap(dek).labeled(label, entry.created ?: now))
            } catch (e: VaultException) {
                skipped.add(SkippedEntry(entry.kekId, label, e.code))
            }
        }
        return write(plaintext, dek, entries, over.vaultId, over.counter, 1, skipped)
    }

    /** Wraps the DEK for one more key; the next seal writes the entry. */
    suspend fun enroll(key: KeyWrapping, label: String, state: VaultState): VaultState {
        if (state.entries.any { it.kekId == key.kekId }) throw VaultException.NoRecipients("the vault already has an entry for this kek_id")
        return state.withEntries(state.entries + key.wrap(state.dek).labeled(label, UtcTime.format(clock())))
    }

    fun revoke(kekId: String, state: VaultState): VaultState {
        val remaining = state.entries.filter { it.kekId != kekId }
        if (remaining.size == state.entries.size) throw VaultException.NoRecipients("the vault has no entry for this kek_id")
        if (remaining.isEmpty()) throw VaultException.NoRecipients("cannot revoke the last entry")
        return state.withEntries(remaining)
    }

    /** Call after the server accepted [sealed]; a failed upload leaves the counter store unchanged. */
    fun markAccepted(sealed: SealedVault) {
        sealed.state.envelope.counter?.let { counters.advance(sealed.state.vaultId, it) }
    }

    private fun write(plaintext: ByteArray, dek: ByteArray, entries: List<WrappedKey>, vaultId: String, previous: Long,
                      dekSeals: Long, skipped: List<SkippedEntry>?): SealedVault {
        if (entries.isEmpty()) throw VaultException.NoRecipients("no entry can unwrap the DEK")
        if (entries.map { it.kekId }.toSet().size != entries.size) throw VaultException.NoRecipients("two entries have the same kek_id")
        val tooLong = { text: String? -> text != null && text.codePointCount(0, text.length) > WrappedKey.MAX_LABEL_CHARACTERS }
        if (entries.any { tooLong(it.label) } || tooLong(hint)) throw VaultException.Malformed("labels and the hint have at most 256 characters")
        val counter = maxOf(previous, counters.highest(vaultId)) + 1
        val members = arrayListOf<Pair<String, JsonValue>>(
            "v" to Json.int(1), "wrappedDeks" to JsonValue.Arr(entries.map { it.json }), "updatedUtc" to Json.str(UtcTime.format(clock())))
        hint?.let { members.add("hint" to Json.str(it)) }
        members.add("counter" to Json.int(counter))
        members.add("dek_seals" to Json.int(dekSeals))
        val macs = HeaderAuthenticator(dek).macs(JsonValue.Obj(members))
        members.add("macs" to Json.str(Base64Url.encode(macs)))
        val header = JsonValue.Obj(members)
        val (iv, sealed) = Crypto.gcmSeal(dek, plaintext, HeaderAuthenticator.additionalData(header))
        val envelope = VaultEnvelope(entries, iv, sealed.copyOfRange(sealed.size - 16, sealed.size), sealed.copyOfRange(0, sealed.size - 16),
            (header["updatedUtc"] as JsonValue.Str).value, hint, counter, dekSeals, macs, header)
        val blob = envelope.encoded()
        if (blob.size > maxBlobBytes) throw VaultException.BlobTooLarge("the blob would be ${blob.size} bytes; the server accepts at most $maxBlobBytes bytes")
        return SealedVault(blob, VaultState(vaultId, envelope, entries, dek), skipped)
    }

    /**
     * A blob in the seed's form (§2): no counter, no AAD, entries with only `kek_id` and `dek_cipher` (use
     * [KeystoreKek.wrapSeedLayout] / [AesGcmKek.wrapSeedLayout] for the seed's Android layout). For seed readers only.
     */
    fun sealSeedForm(plaintext: ByteArray, dek: ByteArray, entries: List<WrappedKey>, hint: String? = this.hint): ByteArray {
        val members = arrayListOf<Pair<String, JsonValue>>("v" to Json.int(1),
            "wrappedDeks" to JsonValue.Arr(entries.map { Json.obj("kek_id" to Json.str(it.kekId), "dek_cipher" to Json.str(Base64Url.encode(it.dekCipher))) }),
            "updatedUtc" to Json.str(UtcTime.format(clock())))
        hint?.let { members.add("hint" to Json.str(it)) }
        val header = JsonValue.Obj(members)
        val (iv, sealed) = Crypto.gcmSeal(dek, plaintext, null)
        return VaultEnvelope(entries, iv, sealed.copyOfRange(sealed.size - 16, sealed.size), sealed.copyOfRange(0, sealed.size - 16),
            (header["updatedUtc"] as JsonValue.Str).value, hint, null, null, null, header).encoded()
    }
}
