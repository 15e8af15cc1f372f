package com.walletvault

import java.io.File
import java.io.IOException
import java.nio.file.Files
import java.nio.file.StandardCopyOption
import javax.crypto.Cipher
import javax.crypto.SecretKey
import javax.crypto.spec.GCMParameterSpec

/**
 * The device's local state, every file sealed with AES-256-GCM under [atRestKey] with the file's name as AAD:
 * the working copy, the last synced copy and blob, the sync record, the anti-rollback state (counters and anchors),
 * the single-use pairing key and the count of wrong confirmation codes typed for it, and the blob of a create not
 * known to be stored.
 *
 * The anti-rollback state (issue 26, point 10) is what makes a server's replay or forgery detectable, so losing it
 * must not silently turn the checks off. It lives in one sealed file, [STATE], carrying a generation number that
 * every write raises; the generation last written is pinned in a second sealed file, [GENERATION], written right
 * after. A read refuses ([SyncException.Code.LOCAL_STORAGE]) a state whose generation is below the pin (the file was
 * replaced by an earlier copy of itself: an older counter would let an older vault in), and a missing state once the
 * profile has synced (a synced blob or version is kept, or a generation was pinned): never a fresh start. Sealing
 * binds each file to its name, so one file cannot be passed off as another. What this cannot see is the state and
 * its pin rolled back together (as when a whole-device backup is restored): nothing in the directory outlives that,
 * short of a hardware monotonic counter; members comparing anchors (FORMAT.md §11.6) remain the check then.
 * Profiles from before generations (separate `counters` and `anchors` files, no pin) are read once and moved over.
 * Only [VaultSyncEngine.recover] and [VaultSyncEngine.confirmPairing], which authenticate the vault another way,
 * replace a refused state ([reestablishAntiRollbackState]).
 *
 * On Android, [atRestKey] is a Keystore AES key without user authentication (so background syncs can read it);
 * on the JVM, a key the caller provides. The IV is whatever the cipher chose on init (the Keystore refuses
 * caller-provided IVs), stored in front of the ciphertext.
 */
class LocalVaultStore(val directory: File, private val atRestKey: SecretKey) {
    /**
     * Whether [directory] held state sealed under an at-rest key this device does not have (Auto Backup or a device
     * transfer copied the files, the Keystore key stayed behind) and was cleared: this profile starts as a new device
     * (pair it or recover), instead of failing every call with `LOCAL_STORAGE` forever (issue 27 point 4). Show it as
     * "this vault was set up on another phone". Only a failed authentication of the [PROFILE] file (or, for
     * profiles from before it, of the first sealed file) clears; any other failure to read is reported as before.
     */
    val clearedStateSealedElsewhere: Boolean

    init {
        if (!directory.isDirectory && !directory.mkdirs()) throw SyncException(SyncException.Code.LOCAL_STORAGE, "cannot create ${directory.path}")
        clearedStateSealedElsewhere = clearIfSealedElsewhere()
    }

    /**
     * Probes one sealed file with the at-rest key: a wrong tag means another key sealed it, so every sealed file is
     * deleted (their key is not on this device: nothing in them can ever be read). Then pins this key with [PROFILE].
     */
    private fun clearIfSealedElsewhere(): Boolean {
        val profile = File(directory, "$PROFILE.sealed")
        val probe = if (profile.exists()) profile else directory.listFiles()?.filter { it.name.endsWith(".sealed") }?.sortedBy { it.name }?.firstOrNull()
        var cleared = false
        if (probe != null && !openedHere(probe.name.removeSuffix(".sealed"), probe)) {
            directory.listFiles()?.filter { it.name.endsWith(".sealed") }?.forEach { it.delete() }
            cleared = true
        }
        if (!profile.exists()) write(PROFILE, Crypto.randomBytes(16))
        return cleared
    }

    /** False only when the file's tag does not verify under this key (AES-GCM's answer to "sealed under another key"). */
    private fun openedHere(name: String, file: File): Boolean {
        val sealed = try { Files.readAllBytes(file.toPath()) } catch (e: IOException) { return true }
        return try {
            decrypt(name, sealed)
            true
        } catch (e: javax.crypto.AEADBadTagException) {
            false
        } catch (e: Exception) {
            true
        }
    }

    class Record(val syncedVersion: String?, val hasLocalEdits: Boolean, val nextAttemptAt: Long?)

    private fun seal(name: String, plaintext: ByteArray): ByteArray {
        val cipher = Cipher.getInstance("AES/GCM/NoPadding")
        cipher.init(Cipher.ENCRYPT_MODE, atRestKey)
        cipher.updateAAD(Crypto.utf8(name))
        val sealed = cipher.doFinal(plaintext)
        val iv = cipher.iv
        return byteArrayOf(iv.size.toByte()) + iv + sealed
    }

    private fun decrypt(name: String, sealed: ByteArray): ByteArray {
        val ivLength = sealed[0].toInt()
        val cipher = Cipher.getInstance("AES/GCM/NoPadding")
        cipher.init(Cipher.DECRYPT_MODE, atRestKey, GCMParameterSpec(128, sealed, 1, ivLength))
        cipher.updateAAD(Crypto.utf8(name))
        return cipher.doFinal(sealed, 1 + ivLength, sealed.size - 1 - ivLength)
    }

    private fun open(name: String, sealed: ByteArray): ByteArray {
        try {
            return decrypt(name, sealed)
        } catch (e: Exception) {
            throw SyncException(SyncException.Code.LOCAL_STORAGE, "$name cannot be read back")
        }
    }

    fun read(name: String): ByteArray? {
        val file = File(directory, "$name.sealed")
        if (!file.exists()) return null
        // Files.readAllBytes reads to the end of the file opened: Kotlin 1.3's File.readBytes reads as many bytes as the
        // path's length at the time, so a file replaced (renamed over) by a shorter one in between read short.
        return open(name, try { Files.readAllBytes(file.toPath()) } catch (e: IOException) { throw SyncException(SyncException.Code.LOCAL_STORAGE, "cannot read $name") })
    }

    /** Writes atomically: a temporary file, then a rename. */
    fun write(name: String, plaintext: ByteArray) {
        val target = File(directory, "$name.sealed")
        val temporary = File(directory, ".$name.${System.nanoTime()}.tmp")
        try {
            temporary.writeBytes(seal(name, plaintext))
            Files.move(temporary.toPath(), target.toPath(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
        } catch (e: IOException) {
            temporary.delete()
            throw SyncException(SyncException.Code.LOCAL_STORAGE, "cannot write $name")
        }
    }

    fun delete(name: String) { File(directory, "$name.sealed").delete() }

    fun record(): Record {
        val obj = read("record")?.let { Json.parse(it) as? JsonValue.Obj } ?: return Record(null, false, null)
        return Record(obj["synced_version"]?.string, obj["has_local_edits"] == JsonValue.Bool(true), obj["next_attempt_at"]?.long)
    }

    fun save(record: Record) {
        write("record", Json.write(Json.obj("synced_version" to (record.syncedVersion?.let { Json.str(it) } ?: JsonValue.Null),
            "has_local_edits" to JsonValue.Bool(record.hasLocalEdits), "next_attempt_at" to (record.nextAttemptAt?.let { Json.int(it) } ?: JsonValue.Null))))
    }

    fun workingCopy(): VaultDocument? = read("working")?.let { parseDocument("working", it) }
    fun syncedCopy(): VaultDocument? = read("synced")?.let { parseDocument("synced", it) }
    fun syncedBlob(): ByteArray? = read("synced-blob")
    fun saveWorkingCopy(document: VaultDocument) = write("working", document.encoded())

    /** The blob of a create sent but not known to be stored (as sent), null when none is pending. */
    internal fun pendingCreate(): ByteArray? = read(PENDING_CREATE)

    /**
     * Keeps the blob of a create about to be sent, so that a create whose answer and check were both lost can be
     * recognised on the server by its exact bytes later. Throws [SyncException] `LOCAL_STORAGE`.
     */
    internal fun savePendingCreate(blob: ByteArray) = write(PENDING_CREATE, blob)

    /**
     * Forgets the pending create: stored and recorded, or known not to be on the server. One left behind does no
     * harm: the next create compares it with what the server holds before using it.
     */
    internal fun clearPendingCreate() = delete(PENDING_CREATE)

    /**
     * Records a version the server holds: [synced] and its [blob] become the merge base, [working] the working copy,
     * [record] the bookkeeping; a crash or error part-way leaves a profile whose next sync loses no one's edit.
     *
     * Each file is replaced atomically but the four are not one write, so the order is what keeps a part-done commit
     * safe. The merge base must never be newer than the working copy: a base that already holds another device's
     * items makes the old working copy's lack of them read as deletions, and the next merge drops them. So the working
     * copy goes first: it is what the server now holds (plus edits already flagged pending), so a next sync under the
     * old record restores the same content or merges it into itself again. The base goes before its blob, since the
     * blob alone (the recipients sealed over) is harmless to keep old while the record still names the old version.
     * The record goes last: until it names the new version the next sync loads that version again and merges or
     * restores it, which the files already written agree with. Throws [SyncException] `LOCAL_STORAGE` when a file
     * cannot be written (those before it are).
     */
    internal fun commitSynced(synced: VaultDocument, blob: ByteArray, working: VaultDocument, record: Record) {
        // From the first synced version on, the state file exists (even empty, for a seed-form vault), so that
        // losing it is seen; a refused state refuses this commit before any of its files is written.
        synchronized(stateLock) { val state = loadState(); if (state.generation == 0L) storeState(1, state.counters, state.anchors, state.seen) }
        saveWorkingCopy(working)
        write("synced", synced.encoded())
        write("synced-blob", blob)
        save(record)
    }

    /**
     * After the server erased the vault ([VaultSyncEngine.eraseAccount]): drops the working and synced copies, the
     * record, the wrong-code count and a pending create, and starts the anti-rollback state afresh at a new
     * generation (so the erased vault's counter and anchor do not make a new vault look rolled back or foreign). The
     * device key is not here and stays.
     */
    fun eraseVault() {
        for (name in listOf("working", "synced", "synced-blob", "record", ATTEMPTS, PENDING_CREATE)) delete(name)
        reestablishAntiRollbackState(emptyMap(), emptyMap())
    }

    private fun parseDocument(name: String, bytes: ByteArray) = try { VaultDocument.parse(bytes) } catch (e: IllegalArgumentException) {
        throw SyncException(SyncException.Code.LOCAL_STORAGE, "$name is not a vault document")
    }

    // MARK: the anti-rollback state (counters and anchors)

    private class RollbackState(val generation: Long, val counters: Map<String, Long>, val anchors: Map<String, VaultAnchor>,
                                /** §11.7: per vault, the digests of the newest versions accepted or written, by counter. */
                                val seen: Map<String, Map<Long, ByteArray>> = emptyMap())

    private val stateLock = Any()

    private fun broken(name: String) = SyncException(SyncException.Code.LOCAL_STORAGE, "$name cannot be read back")

    private fun generationIn(obj: JsonValue.Obj?, name: String): Long {
        val generation = obj?.get("generation")?.long ?: throw broken(name)
        if (generation < 1) throw broken(name)
        return generation
    }

    private fun parseObject(name: String, bytes: ByteArray): JsonValue.Obj =
        (try { Json.parse(bytes) } catch (e: JsonParseError) { throw broken(name) }) as? JsonValue.Obj ?: throw broken(name)

    /** The generation last written, as [GENERATION] pins it; null if that file is absent. */
    private fun pinnedGeneration(): Long? = read(GENERATION)?.let { generationIn(parseObject(GENERATION, it), GENERATION) }

    private fun parseCounters(obj: JsonValue.Obj?, name: String): Map<String, Long> =
        obj?.members?.map { (k, v) -> Pair(k, v.long?.takeIf { it >= 0 } ?: throw broken(name)) }?.toMap() ?: emptyMap()

    // An unreadable anchor is an error, never a silently forgotten one (that would turn the checks off).
    private fun parseAnchors(obj: JsonValue.Obj?, name: String): Map<String, VaultAnchor> =
        obj?.members?.map { (k, v) -> Pair(k, VaultAnchor.parse(v) ?: throw broken(name)) }?.toMap() ?: emptyMap()

    // `{"vault": {"counter": "digest", …}}`; an unreadable digest is an error too.
    private fun parseSeen(obj: JsonValue.Obj?, name: String): Map<String, Map<Long, ByteArray>> =
        obj?.members?.map { (vault, value) ->
            val digests = (value as? JsonValue.Obj ?: throw broken(name)).members.map { (counter, digest) ->
                val c = counter.toLongOrNull()?.takeIf { it > 0 } ?: throw broken(name)
                val d = digest.string?.let { Base64Url.decode(it) }?.takeIf { it.size == 32 } ?: throw broken(name)
                Pair(c, d)
            }.toMap()
            Pair(vault, digests)
        }?.toMap() ?: emptyMap()

    private fun parseState(bytes: ByteArray): RollbackState {
        val obj = parseObject(STATE, bytes)
        val counters = obj["counters"]?.let { it as? JsonValue.Obj ?: throw broken(STATE) }
        val anchors = obj["anchors"]?.let { it as? JsonValue.Obj ?: throw broken(STATE) }
        val seen = obj["seen"]?.let { it as? JsonValue.Obj ?: throw broken(STATE) }
        return RollbackState(generationIn(obj, STATE), parseCounters(counters, STATE), parseAnchors(anchors, STATE), parseSeen(seen, STATE))
    }

    /** A synced seed-form blob (no counter, no anchor): an older library kept no state for it, and there is none to lose. */
    private fun syncedSeedForm(): Boolean {
        val blob = read("synced-blob") ?: return false
        return try { VaultEnvelope.parse(blob).counter == null } catch (e: VaultException) { false }
    }

    /** Whether this profile holds a synced vault: then a missing state is an error, not a first start. */
    private fun hasSynced(): Boolean = File(directory, "synced-blob.sealed").exists() || record().syncedVersion != null

    /** A missing state is the Swift SDK's `confirmationRequired` (pair again or recover); an older copy is tampering. */
    private fun refusal(what: String, code: SyncException.Code = SyncException.Code.LOCAL_STORAGE) = SyncException(code,
        "the anti-rollback state $what: refusing to go on, which would accept older versions of the vault; pair this device again or recover it")

    /**
     * The state, checked: present once the profile has synced, and not older than the generation pinned in
     * [GENERATION]. A profile from before generations (the separate `counters` and `anchors` files, no pin) is read
     * from those, as generation 0, and moves to [STATE] at the next write.
     */
    private fun loadState(): RollbackState {
        val pin = pinnedGeneration()
        val bytes = read(STATE)
        if (bytes == null) {
            if (pin == null) {
                val counters = read(LEGACY_COUNTERS)
                val anchors = read(LEGACY_ANCHORS)
                if (counters != null || anchors != null) return RollbackState(0,
                    parseCounters(counters?.let { parseObject(LEGACY_COUNTERS, it) }, LEGACY_COUNTERS),
                    parseAnchors(anchors?.let { parseObject(LEGACY_ANCHORS, it) }, LEGACY_ANCHORS))
                if (!hasSynced() || syncedSeedForm()) return RollbackState(0, emptyMap(), emptyMap())
            }
            throw refusal("is missing although this profile has synced (generation ${pin ?: "unknown"} was written)",
                SyncException.Code.CONFIRMATION_REQUIRED)
        }
        val state = parseState(bytes)
        if (pin != null && state.generation < pin)
            throw refusal("file is an older copy (generation ${state.generation}; generation $pin was written since)")
        return state
    }

    /** Writes [STATE] at the next generation, then the pin; a crash between the two leaves the state ahead, which reads. */
    private fun storeState(generation: Long, counters: Map<String, Long>, anchors: Map<String, VaultAnchor>,
                           seen: Map<String, Map<Long, ByteArray>>) {
        write(STATE, Json.write(Json.obj("generation" to Json.int(generation),
            "counters" to JsonValue.Obj(counters.entries.sortedBy { it.key }.map { Pair(it.key, Json.int(it.value) as JsonValue) }),
            "anchors" to JsonValue.Obj(anchors.entries.sortedBy { it.key }.map { Pair(it.key, it.value.json as JsonValue) }),
            "seen" to JsonValue.Obj(seen.entries.sortedBy { it.key }.map { vault ->
                Pair(vault.key, JsonValue.Obj(vault.value.entries.sortedBy { it.key }.map {
                    Pair(it.key.toString(), Json.str(Base64Url.encode(it.value)) as JsonValue) }) as JsonValue) }))))
        write(GENERATION, Json.write(Json.obj("generation" to Json.int(generation))))
        delete(LEGACY_COUNTERS)
        delete(LEGACY_ANCHORS)
    }

    /**
     * Throws [SyncException.Code.CONFIRMATION_REQUIRED] when the anti-rollback state is missing after a sync, and
     * [SyncException.Code.LOCAL_STORAGE] when it is an older copy or unreadable: then only [VaultSyncEngine.recover] and [VaultSyncEngine.confirmPairing]
     * go on, through [reestablishAntiRollbackState].
     */
    fun checkAntiRollbackState() { synchronized(stateLock) { loadState() } }

    /**
     * Replaces an unusable state by what an open just learnt from a vault authenticated another way (a recovery
     * key's symmetric entry, or the §11.4 code the user typed): only the engine's recover and confirmPairing call it,
     * after that open succeeded. The new generation is above every one seen, so the replaced file stays refused.
     */
    internal fun reestablishAntiRollbackState(counters: Map<String, Long>, anchors: Map<String, VaultAnchor>,
                                              seen: Map<String, Map<Long, ByteArray>> = emptyMap()) = synchronized(stateLock) {
        val pin = runCatching { pinnedGeneration() }.getOrNull() ?: 0L
        val old = runCatching { read(STATE)?.let { parseState(it) } }.getOrNull()?.generation ?: 0L
        storeState(maxOf(pin, old) + 1, counters, anchors, seen)
    }

    /** Anchors (§11.2), in the anti-rollback state beside the counters (an anchor is not secret). */
    val anchors: AnchorStore = object : AnchorStore {
        override fun anchor(vaultId: String): VaultAnchor? = synchronized(stateLock) { loadState().anchors[vaultId] }
        override fun pin(vaultId: String, anchor: VaultAnchor) = synchronized(stateLock) {
            val state = loadState()
            val current = state.anchors[vaultId]
            if (current != anchor && AnchorRules.replaces(current, anchor))
                storeState(state.generation + 1, state.counters, state.anchors + (vaultId to anchor), state.seen)
        }
    }

    /** Counters, in the anti-rollback state, so rollback detection survives restarts. */
    val counters: CounterStore = object : CounterStore {
        override fun highest(vaultId: String): Long = synchronized(stateLock) { loadState().counters[vaultId] ?: 0 }
        override fun advance(vaultId: String, counter: Long) = synchronized(stateLock) {
            val state = loadState()
            if ((state.counters[vaultId] ?: 0) < counter) storeState(state.generation + 1, state.counters + (vaultId to counter), state.anchors, state.seen)
        }
        override fun acceptedDigest(vaultId: String, counter: Long): ByteArray? = synchronized(stateLock) { loadState().seen[vaultId]?.get(counter)?.copyOf() }
        override fun hasSeen(vaultId: String, digest: ByteArray): Boolean = synchronized(stateLock) { VersionDigests.contains(loadState().seen[vaultId], digest) }
        override fun remember(vaultId: String, counter: Long, digest: ByteArray) = synchronized(stateLock) {
            val state = loadState()
            val current = state.seen[vaultId]?.get(counter)
            if (current == null || !current.contentEquals(digest))
                storeState(state.generation + 1, state.counters, state.anchors, state.seen + (vaultId to VersionDigests.adding(state.seen[vaultId] ?: emptyMap(), counter, digest)))
        }
    }

    // MARK: dead device keys (seed §7)

    /**
     * The `kek_id`s of this device's keys that died and were replaced, whose entries the next save of this device's
     * own entry drops (Swift `deadDeviceKeyIDs`): recorded before the new key is made, so a save that fails after it
     * does not lose them (the platform then names the new key as the last one).
     */
    fun deadKekIds(): List<String> = read(DEAD_KEK_IDS)?.let { String(it, Charsets.UTF_8).split("\n").filter { id -> id.isNotEmpty() } } ?: emptyList()

    /** Adds [kekId] to [deadKekIds]. */
    fun rememberDeadKekId(kekId: String) {
        val ids = deadKekIds()
        if (kekId !in ids) write(DEAD_KEK_IDS, Crypto.utf8((ids + kekId).joinToString("\n")))
    }

    /** Forgets [deadKekIds] once a saved version holds this device's own entry and none of theirs. */
    fun forgetDeadKekIds() = delete(DEAD_KEK_IDS)

    // MARK: wrong confirmation codes (FORMAT.md §11.4)

    /** How many wrong confirmation codes were typed for the entry [kekId] (this device's, being confirmed); 0 if none. */
    fun wrongConfirmationCodes(kekId: String): Int {
        val obj = read(ATTEMPTS)?.let { parseObject(ATTEMPTS, it) } ?: return 0
        if (obj["kek_id"]?.string != kekId) return 0
        return obj["wrong"]?.long?.toInt() ?: throw broken(ATTEMPTS)
    }

    /** Records [count] wrong codes for [kekId] (one entry at a time: another kek_id's count is replaced); 0 forgets it. */
    fun saveWrongConfirmationCodes(kekId: String, count: Int) {
        if (count <= 0) delete(ATTEMPTS)
        else write(ATTEMPTS, Json.write(Json.obj("kek_id" to Json.str(kekId), "wrong" to Json.int(count.toLong()))))
    }

    companion object {
        /** A random value sealed under the at-rest key when the profile starts: the probe of [clearedStateSealedElsewhere]. */
        const val PROFILE = "profile"
        /** The sealed anti-rollback state: `{"generation": g, "counters": {…}, "anchors": {…}, "seen": {vault: {counter: digest}}}`. */
        const val STATE = "state"
        /** Pins the last generation of [STATE] written: `{"generation": g}`. */
        const val GENERATION = "state-generation"
        /** The wrong-code count of the pairing being confirmed: `{"kek_id": …, "wrong": n}`. */
        const val ATTEMPTS = "pairing-attempts"
        const val DEAD_KEK_IDS = "dead-kek-ids"
        /** The blob of a create sent but not known to be stored, as sent (vault ciphertext). */
        internal const val PENDING_CREATE = "create-blob"
        private const val LEGACY_COUNTERS = "counters"
        private const val LEGACY_ANCHORS = "anchors"
    }
}
