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
 * the working copy, the last synced copy and blob, the sync record, the counters and anchors, the single-use pairing key.
 *
 * On Android, [atRestKey] is a Keystore AES key without user authentication (so background syncs can read it);
 * on the JVM, a key the caller provides. The IV is whatever the cipher chose on init (the Keystore refuses
 * caller-provided IVs), stored in front of the ciphertext.
 */
class LocalVaultStore(val directory: File, private val atRestKey: SecretKey) {
    init {
        if (!directory.isDirectory && !directory.mkdirs()) throw SyncException(SyncException.Code.LOCAL_STORAGE, "cannot create ${directory.path}")
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

    private fun open(name: String, sealed: ByteArray): ByteArray {
        try {
            val ivLength = sealed[0].toInt()
            val cipher = Cipher.getInstance("AES/GCM/NoPadding")
            cipher.init(Cipher.DECRYPT_MODE, atRestKey, GCMParameterSpec(128, sealed, 1, ivLength))
            cipher.updateAAD(Crypto.utf8(name))
            return cipher.doFinal(sealed, 1 + ivLength, sealed.size - 1 - ivLength)
        } catch (e: Exception) {
            throw SyncException(SyncException.Code.LOCAL_STORAGE, "$name cannot be read back")
        }
    }

    fun read(name: String): ByteArray? {
        val file = File(directory, "$name.sealed")
        if (!file.exists()) return null
        return open(name, try { file.readBytes() } catch (e: IOException) { throw SyncException(SyncException.Code.LOCAL_STORAGE, "cannot read $name") })
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
    fun saveSynced(document: VaultDocument, blob: ByteArray) {
        write("synced", document.encoded())
        write("synced-blob", blob)
    }

    private fun parseDocument(name: String, bytes: ByteArray) = try { VaultDocument.parse(bytes) } catch (e: IllegalArgumentException) {
        throw SyncException(SyncException.Code.LOCAL_STORAGE, "$name is not a vault document")
    }

    /** Anchors (§11.2) persisted here beside the counters, sealed like every file (an anchor is not secret). */
    val anchors: AnchorStore = object : AnchorStore {
        private val lock = Any()
        private fun all(): MutableMap<String, VaultAnchor> {
            val text = read("anchors") ?: return HashMap()
            // An unreadable anchor is an error, never a silently forgotten one (that would turn the checks off).
            val broken = SyncException(SyncException.Code.LOCAL_STORAGE, "anchors cannot be read back")
            val obj = (try { Json.parse(text) } catch (e: JsonParseError) { throw broken }) as? JsonValue.Obj ?: throw broken
            return obj.members.map { (k, v) -> Pair(k, VaultAnchor.parse(v) ?: throw broken) }.toMap(HashMap())
        }
        override fun anchor(vaultId: String): VaultAnchor? = synchronized(lock) { all()[vaultId] }
        override fun pin(vaultId: String, anchor: VaultAnchor) = synchronized(lock) {
            val map = all()
            if (map[vaultId] != anchor && AnchorRules.replaces(map[vaultId], anchor)) {
                map[vaultId] = anchor
                write("anchors", Json.write(JsonValue.Obj(map.entries.sortedBy { it.key }.map { Pair(it.key, it.value.json as JsonValue) })))
            }
        }
    }

    /** Counters persisted here, sealed, so rollback detection survives restarts. */
    val counters: CounterStore = object : CounterStore {
        private val lock = Any()
        private fun all(): MutableMap<String, Long> {
            val obj = read("counters")?.let { Json.parse(it) as? JsonValue.Obj } ?: return HashMap()
            return obj.members.mapNotNull { (k, v) -> v.long?.let { Pair(k, it) } }.toMap(HashMap())
        }
        override fun highest(vaultId: String): Long = synchronized(lock) { all()[vaultId] ?: 0 }
        override fun advance(vaultId: String, counter: Long) = synchronized(lock) {
            val map = all()
            if ((map[vaultId] ?: 0) < counter) {
                map[vaultId] = counter
                write("counters", Json.write(JsonValue.Obj(map.entries.sortedBy { it.key }.map { Pair(it.key, Json.int(it.value) as JsonValue) })))
            }
        }
    }
}
