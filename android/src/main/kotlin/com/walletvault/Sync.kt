package com.walletvault

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.util.concurrent.CancellationException
import kotlin.coroutines.Continuation
import kotlin.coroutines.resume
import kotlin.coroutines.suspendCoroutine

sealed class SyncReport(val version: String?) {
    class UpToDate(version: String) : SyncReport(version)
    class Created(version: String) : SyncReport(version)
    class Pushed(version: String) : SyncReport(version)
    class Restored(version: String) : SyncReport(version)
    class Merged(version: String, val conflicts: List<String>) : SyncReport(version)
    class RateLimited(val nextAttemptAt: Long) : SyncReport(null)
    class Rotated(version: String, val skipped: List<SkippedEntry>) : SyncReport(version)
    /**
     * A new device's entry was saved: show [confirmationCode] so its user types it there (FORMAT.md §11.4). The code
     * must never travel through the server (nor any channel it could touch): the user reads it off this screen and
     * types it on the other.
     */
    class Approved(version: String, val confirmationCode: String) : SyncReport(version)
    /** The content of the kept version [restoredFrom] was saved again as the new current version [version]. */
    class RestoredVersion(val restoredFrom: String, version: String) : SyncReport(version)
    override fun toString() = "${javaClass.simpleName}($version)"
}

class DeviceEntry(val kekId: String, val label: String, val alg: String, val created: String?, val isThisDevice: Boolean, val isRecoveryPath: Boolean,
                  /** Where this device's own key lives (StrongBox, the plain Keystore, software), as recorded when it was made; null for other entries. */
                  val keyStorage: KeyStorageLevel? = null)

class KeyHealth(val usableHere: List<String>, val deviceKeys: Int, val recoveryPaths: Int, val warning: String?)

/**
 * Where the device's own key-encryption key comes from. On Android: [create] generates a new
 * BiometricPrompt-gated AndroidKeyStore AES key under a new alias and returns a [KeystoreKek] with a new
 * [KeystoreKek.newKekId]; [current] returns that key, or null before the first one.
 */
interface DeviceKeyStore {
    /**
     * This device's key, null before the first one. Throws [VaultException.Invalidated] when the platform no longer
     * holds the key this device had (its vault entry is dead; [lastKekId] names it, [create] replaces it).
     */
    fun current(): KeyEncryptionKey?
    /**
     * The `kek_id` of this device's key, also after the platform lost it ([current] throws [VaultException.Invalidated]),
     * so that recovering or pairing again removes its dead entry; null before the first key. A store whose [current]
     * throws that must override this.
     */
    fun lastKekId(): String? = try { current()?.kekId } catch (e: VaultException.Invalidated) { null }
    /** A new key replacing any previous one (first use, or after the platform invalidated the old one); may show a prompt. */
    suspend fun create(): KeyEncryptionKey
    /** Where [current]'s key lives, as recorded when it was made; null when unknown. */
    fun storageLevel(): KeyStorageLevel? = null
}

/** A pairing request (Swift `PairingRequest`): `wvpair1.<P-256 public key>.<label>`, and its comparison value. */
class PairingRequest(val publicKey: PublicJwk.P256, val label: String) {
    val encoded: String get() = "wvpair1.${Base64Url.encode(publicKey.x + publicKey.y)}.${Base64Url.encode(Crypto.utf8(label))}"

    /**
     * The comparison value both devices show, for the user to compare before approving: `"0604 0512 8232 3547 2833"`.
     * `n` = the first 8 bytes of SHA-256("WalletVault-v2 pairing comparison" ‖ 0x00 ‖ X ‖ Y) (X ‖ Y the 64-byte
     * public key) as an unsigned big-endian 64-bit integer, written as exactly 20 decimal digits in five groups of four.
     * 64 bits, so that no one can grind a key of their own to show the same value (the 20 bits before could be).
     */
    val shortAuthenticationString: String
        get() {
            val digest = Crypto.sha256(Crypto.concat(COMPARISON_DOMAIN, publicKey.x, publicKey.y))
            // Unsigned: BigInteger of the 8 bytes as a positive number; its decimal digits are locale-free.
            val digits = java.math.BigInteger(1, digest.copyOf(8)).toString().padStart(20, '0')
            return digits.chunked(4).joinToString(" ")
        }

    companion object {
        private val COMPARISON_DOMAIN = Crypto.utf8("WalletVault-v2 pairing comparison") + byteArrayOf(0)

        fun parse(text: String): PairingRequest {
            val parts = text.trim().split(".")
            val raw = parts.getOrNull(1)?.let { Base64Url.decode(it) }
            val labelBytes = parts.getOrNull(2)?.let { Base64Url.decode(it) }
            if (parts.size != 3 || parts[0] != "wvpair1" || raw == null || raw.size != 64 || labelBytes == null)
                throw SyncException(SyncException.Code.INVALID_INPUT, "not a pairing request")
            val label = try { Json.utf8(labelBytes) } catch (e: JsonParseError) { throw SyncException(SyncException.Code.INVALID_INPUT, "not a pairing request") }
            if (label.codePointCount(0, label.length) > 256) throw SyncException(SyncException.Code.INVALID_INPUT, "not a pairing request")
            try { Crypto.p256PublicKey(raw.copyOfRange(0, 32), raw.copyOfRange(32, 64), "pairing request") } catch (e: VaultException) {
                throw SyncException(SyncException.Code.INVALID_INPUT, "the pairing request's key is not a P-256 point")
            }
            return PairingRequest(PublicJwk.P256(raw.copyOfRange(0, 32), raw.copyOfRange(32, 64)), label)
        }
    }
}

/**
 * The sync engine (Swift `VaultSyncEngine`'s rules): silent restore, push with `If-Match`, three-way merge with
 * tombstones, a conflict callback, rollback and tamper detection with persisted counters, pairing, recovery,
 * revocation with DEK rotation, key health.
 *
 * An edit made while a sync awaits the network is never lost (the Swift engine this was ported from overwrote it): syncs (and every other
 * network operation) are serialised by a mutex, edits only take a short lock, and each write-back compares the
 * edit generation with the one the round started from; if edits happened meanwhile, they are merged on top of
 * what the round wrote (the later edit wins an item both touched) and stay marked as local edits for the next sync.
 *
 * Main-safe: every suspend call runs on [ioDispatcher] (`Dispatchers.IO` unless given: files, crypto, Argon2id, the
 * Keystore and the network never block the caller's thread), and honours cancellation: a cancelled job or a
 * `withTimeout` ends the call within the request it waits on, with CancellationException, and no retry follows. The
 * [conflictHandler] is called on [ioDispatcher] too (show the dialog with `withContext(Dispatchers.Main)`); whatever
 * thread resumes it, the upload after it runs on [ioDispatcher]. The few plain functions ([document], [edit],
 * [status], [devices], [keyHealth], [anchor], [pairingRequest]) read or write small local files on the caller's thread.
 *
 * Every public call throws only [SyncException] (with the [BackupError] or [VaultException] behind it as
 * [SyncException.backupError] or cause), or CancellationException when the calling coroutine is cancelled: an
 * exception from the app's own code (its [DeviceKeyStore], transport, token source, authenticator, conflict handler),
 * a CancellationException it throws while its caller goes on among them, arrives as a [SyncException], never raw.
 */
class VaultSyncEngine(
    private val store: LocalVaultStore,
    internal val backup: BackupClient,
    private val deviceKeys: DeviceKeyStore,
    private val deviceLabel: String,
    private val conflictHandler: (suspend (ConflictContext) -> ConflictResolution)? = null,
    internal val clock: WalletClock = SystemWalletClock,
    maxBlobBytes: Int = 1_048_576,
    internal val ioDispatcher: CoroutineDispatcher = Dispatchers.IO
) {
    companion object {
        const val VAULT_ID = "vault"
        const val MAX_ROUNDS = 5
        /** Wrong confirmation codes a pairing survives (FORMAT.md §11.4): the third ends it. */
        const val MAX_WRONG_CODES = 3
        /**
         * The failures of an operation that the same operation may get past later: the device's storage, its key's
         * holder (absent, declining, or the key dead until a recovery), the server and the network.
         */
        private val MAY_PASS = setOf(
            SyncException.Code.LOCAL_STORAGE, SyncException.Code.NOT_NOW, SyncException.Code.AUTHENTICATION_CANCELED,
            SyncException.Code.KEY_INVALIDATED, SyncException.Code.SERVER, SyncException.Code.OFFLINE)
        /**
         * The failures that mean this device cannot read the vault the server holds, and so has no write key to prove
         * membership by: an erasure then goes without a proof (as Swift's `cannotRead`).
         */
        private val CANNOT_READ = setOf(
            SyncException.Code.NO_VAULT, SyncException.Code.NO_ACCESS, SyncException.Code.REMOVED_FROM_VAULT,
            SyncException.Code.KEY_INVALIDATED, SyncException.Code.CONFIRMATION_REQUIRED, SyncException.Code.CONFIRMATION_MISMATCH,
            SyncException.Code.TAMPERED, SyncException.Code.ROLLBACK_DETECTED, SyncException.Code.FORK_DETECTED)
        private const val REVOKE_ADVICE =
            "on the approving device, remove (revoke) the device entry just approved, since an impostor may be enrolled"
    }

    private val sealer = VaultSealer(store.counters, hint = deviceLabel, maxBlobBytes = maxBlobBytes, clock = { clock.nowMillis() }, anchors = store.anchors)
    private val opener = VaultOpener(store.counters, store.anchors, maxBlobBytes)
    private val mutex = SuspendMutex()
    private val editLock = Any()
    @Volatile private var generation = 0L

    // MARK: the local document

    /** The working copy, null before this device has a vault. Throws [SyncException] `LOCAL_STORAGE`. */
    fun document(): VaultDocument? = guardedNow { synchronized(editLock) { store.workingCopy() } }

    /**
     * Changes the working copy; allowed at any time, also while a sync runs. Throws [SyncException] `NO_VAULT` before
     * a vault exists, `LOCAL_STORAGE` (also for an exception [change] throws).
     */
    fun edit(change: (VaultDocument, Long) -> Unit) = guardedNow {
        synchronized(editLock) {
            val document = store.workingCopy() ?: throw SyncException(SyncException.Code.NO_VAULT, "create or restore a vault first")
            change(document, clock.nowMillis())
            // Pending before the edit is written: cut short between the two, a pending flag over an unchanged copy
            // costs one needless save, while an edit written under no flag would never be saved and be overwritten by
            // a restore.
            val record = store.record()
            if (!record.hasLocalEdits) store.save(LocalVaultStore.Record(record.syncedVersion, true, record.nextAttemptAt))
            store.saveWorkingCopy(document)
            generation++
        }
    }

    /** What this device last synced and whether edits wait. Throws [SyncException] `LOCAL_STORAGE`. */
    fun status(): LocalVaultStore.Record = guardedNow { store.record() }

    /** The working copy, the edit generation and the sync record, read together under the edit lock. */
    private class Snapshot(val document: VaultDocument?, val generation: Long, val record: LocalVaultStore.Record)

    // The record is read with the copy: read before it, outside the lock, it could say "no edits" while the copy
    // already held an edit made in between, and a restore planned from it overwrote that edit.
    private fun snapshot() = synchronized(editLock) { Snapshot(store.workingCopy(), generation, store.record()) }

    /**
     * Records what the server now holds ([result], sealed as [blob], version [version]) and makes it the working copy,
     * or [pending] (a merge not yet saved over it) when given; edits made since [start] are merged on top. Edits made
     * meanwhile, or a [pending] copy, remain local edits.
     */
    private fun writeBack(
        result: VaultDocument, blob: ByteArray, version: String, start: Snapshot, pending: VaultDocument? = null,
        nextAttemptAt: Long? = null
    ) {
        synchronized(editLock) {
            val editedMeanwhile = generation != start.generation
            val base = pending ?: result
            val working = if (!editedMeanwhile) base else {
                ThreeWayMerge.merge(start.document ?: VaultDocument(), store.workingCopy() ?: VaultDocument(), base, ThreeWayMerge.Winner.LOCAL).merged
            }
            store.commitSynced(result, blob, working, LocalVaultStore.Record(version, editedMeanwhile || pending != null, nextAttemptAt))
        }
    }

    // MARK: creating

    /**
     * Creates the vault on the server, for this device (a new device key if it has none) and [recoveryPaths].
     * A create whose answer was lost is taken as saved when the server holds exactly the blob sent, also when the
     * resend of it met the 409 its first attempt caused. When that could not be learnt either (the check's load failed
     * too), the create fails, and calling it (or [sync]) again adopts the vault of that attempt if the server holds
     * its exact bytes (kept on this device until then), keeping edits made meanwhile as pending.
     * Throws [SyncException] (`SERVER` with [BackupError.Conflict] when another vault is stored already, `SERVER` or
     * `OFFLINE` when the server cannot be reached, `LOCAL_STORAGE`; `INVALID_INPUT` when an earlier attempt was adopted
     * but [recoveryPaths] names a path it was not sealed for: the vault is created, replace the paths).
     */
    suspend fun createVault(recoveryPaths: List<Recipient> = emptyList()): SyncReport = exclusive {
        val start = snapshot()
        val device = liveDeviceKey() ?: deviceKeys.create()
        val adopted = store.pendingCreate()?.let { adoptPendingCreate(it, device) }
        if (adopted != null) {
            // Adopted as the first attempt sealed it: a retry that asks for other recovery paths (a new code shown to
            // the user) must not be told they are in.
            val entries = adopted.second.entries.map { it.kekId }.toSet()
            if (recoveryPaths.any { it.key.kekId !in entries }) {
                throw SyncException(
                    SyncException.Code.INVALID_INPUT,
                    "the vault was created by an earlier attempt, with the recovery paths given then; call replaceRecoveryPaths to put these in their place")
            }
            return@exclusive SyncReport.Created(adopted.first)
        }
        val document = start.document ?: VaultDocument()
        if (start.document == null) synchronized(editLock) { store.saveWorkingCopy(document) }
        val sealed = envelopeCall { sealer.create(document.encoded(), VAULT_ID, listOf(Recipient(device, deviceLabel)) + recoveryPaths) }
        store.savePendingCreate(sealed.blob)
        val version = upload(sealed, document, BackupClient.Precondition.IfNoneStored, start)
        store.clearPendingCreate()
        SyncReport.Created(version)
    }

    /**
     * Adopts an earlier create whose outcome was not learnt, when the server holds exactly its [pending] blob: its
     * counter and anchor are recorded as an accepted upload's are, and the working copy, which descends from the
     * content sealed, stays as it is, pending when it changed since. When the server holds nothing, the same bytes are
     * sent again first. Returns the version and its state, or null (the pending create forgotten) when the server
     * holds another vault.
     *
     * The byte comparison is what makes the vault this device's own: opened without it, a vault read through a
     * public-key entry with no anchor pinned would be any writer's that knows the device's public key.
     * Throws [SyncException] `SERVER` or `OFFLINE` when the server cannot be asked (the pending create is kept for
     * the next try), and what opening it throws (the pending create forgotten when retrying cannot cure that).
     */
    private suspend fun adoptPendingCreate(pending: ByteArray, device: KeyEncryptionKey): Pair<String, VaultState>? {
        val opened: OpenedVault
        val document: VaultDocument
        try {
            opened = envelopeCall { opener.openUnconfirmed(pending, VAULT_ID, listOf(device)) }
            document = decode(opened.plaintext)
        } catch (e: SyncException) {
            // A verdict on the bytes (no entry for this key, an altered blob) stays the same however often it is tried:
            // kept, the pending create would fail every sync from now on.
            if (e.code !in MAY_PASS) store.clearPendingCreate()
            throw e
        }
        val version = try { versionHoldingOrSent(pending, opened.state) } catch (e: BackupError) {
            throw backupFailure("checking the earlier create failed", e)
        }
        if (version == null) {
            store.clearPendingCreate()
            return null
        }
        sealer.markAccepted(opened.state)
        synchronized(editLock) {
            val working = store.workingCopy() ?: document
            store.commitSynced(document, pending, working, LocalVaultStore.Record(version, working != document, null))
        }
        store.clearPendingCreate()
        return Pair(version, opened.state)
    }

    /**
     * The version under which the server holds exactly [pending] (whose state is [state]), sending it again when the
     * server holds no vault; null when it holds another. Throws [BackupError] when the server cannot be asked.
     *
     * The first attempt may still be on its way (a client that gave up on a slow server or proxy): the same bytes
     * again, not a new vault, so that whichever lands is this device's own.
     */
    private suspend fun versionHoldingOrSent(pending: ByteArray, state: VaultState): String? {
        val stored = try { backup.load() } catch (e: BackupError.NotFound) { null }
        if (stored != null) return stored.syncId.takeIf { stored.blob.contentEquals(pending) }
        return try {
            backup.save(pending, BackupClient.Precondition.IfNoneStored, null, state.secrets)
        } catch (e: BackupError.Conflict) {
            versionHolding(pending)
        }
    }

    // MARK: syncing

    /**
     * Brings this device and the server in step: restore, push, or merge (asking [conflictHandler] when both changed an
     * item). A save enrolling this device's own key after a pairing (seed §5) that failed is made again by the next
     * sync, also when nothing else changed ([SyncReport.Pushed]).
     * Throws [SyncException] (`NO_VAULT` when the server stores no vault, whether or not this device has a copy);
     * a rate limit is [SyncReport.RateLimited], not an error.
     */
    suspend fun sync(): SyncReport = exclusive { syncLocked() }

    private suspend fun syncLocked(): SyncReport {
        // Issue 26 point 10: a lost or rolled-back anti-rollback state stops everything here, before any load or write.
        store.checkAntiRollbackState()
        // A create whose outcome was not learnt: without adopting it here, its own vault would read as one this device
        // was never confirmed for (no anchor pinned), and the app would be told to pair or recover.
        store.pendingCreate()?.let { pending -> liveDeviceKey()?.let { adoptPendingCreate(pending, it) } }
        return reportingRateLimit {
            repeat(MAX_ROUNDS) { syncRound()?.let { return@reportingRateLimit it } }
            throw SyncException(SyncException.Code.SERVER, "other devices kept saving; try again", BackupError.Conflict(null, null))
        }
    }

    /**
     * [body]'s report, or [SyncReport.RateLimited] when its save met the server's hourly cap: the local copy stays
     * authoritative, and the time the server allows the next save is recorded, so that syncs until then send none.
     * Throws the other [SyncException]s [body] throws.
     */
    private suspend fun reportingRateLimit(body: suspend () -> SyncReport): SyncReport {
        try {
            return body()
        } catch (e: SyncException) {
            return SyncReport.RateLimited(recordedRateLimit(e) ?: throw e)
        }
    }

    /**
     * [exclusive] for an operation whose own save may meet the server's hourly cap (Swift
     * `exclusivelyRecordingRateLimit`): the time the server allows the next save is recorded (as [reportingRateLimit]
     * records it) before the [SyncException] `SERVER` with [BackupError.RateLimited] is thrown on. Unlike a sync's
     * edits, such an operation (a revoke, an approval, a recovery) is not saved later by itself, so it is no
     * [SyncReport.RateLimited], which says nothing was lost.
     */
    private suspend fun <T> exclusiveRecordingRateLimit(body: suspend () -> T): T = exclusive {
        try {
            body()
        } catch (e: SyncException) {
            recordedRateLimit(e)
            throw e
        }
    }

    /** The next allowed save's time, recorded, when [e] is the server's hourly cap; null for any other failure. */
    private fun recordedRateLimit(e: SyncException): Long? {
        val limited = e.backupError as? BackupError.RateLimited ?: return null
        val next = clock.nowMillis() + limited.retryAfterSeconds * 1000L
        synchronized(editLock) {
            val record = store.record()
            store.save(LocalVaultStore.Record(record.syncedVersion, record.hasLocalEdits, next))
        }
        return next
    }

    /**
     * One round; null when a racing save (409) asks for another. While the server's hourly cap holds this device's
     * saves back, a round still loads: another device's save is merged under the pending edits and becomes the synced
     * version, and only the save waits. A round that loaded nothing then left every operation of the pause (a
     * revocation, a restore, an erasure) working over a version the server may have replaced, for up to an hour.
     */
    private suspend fun syncRound(): SyncReport? {
        val start = snapshot()
        val record = start.record
        val heldUntil = record.nextAttemptAt?.takeIf { clock.nowMillis() < it && record.hasLocalEdits }
        val working = start.document
        val remote = loadRemote(record.syncedVersion)
        try {
            if (remote == null) {
                // No vault on either side is no state to be in step with (Swift `.noVault`): the app offers to
                // create one or pair, which an "up to date" report would hide.
                throw SyncException(SyncException.Code.NO_VAULT,
                    if (working != null) "no vault on the server; create one" else "no vault is stored for this account")
            }
            val changed = remote.syncId != record.syncedVersion
            if (!changed) {
                val synced = remote.syncId
                if (!record.hasLocalEdits || working == null) return enrollInSyncedVersion(synced, record, start) ?: SyncReport.UpToDate(synced)
                if (heldUntil != null) return SyncReport.RateLimited(heldUntil)
                val state = openSynced()
                return SyncReport.Pushed(saveOver(state, enrollingThisDevice(state), working, synced, start))
            }
            if (working == null || (!record.hasLocalEdits && record.syncedVersion != null)) return restore(remote, start)
            return merge(remote, working, start, savingNotBefore = heldUntil)
        } catch (e: SyncException) {
            // Another device saved first: load again and decide anew.
            if (e.backupError is BackupError.Conflict) return null
            throw e
        }
    }

    /** The server's blob, or null when nothing is stored; the cached one on 304. */
    private suspend fun loadRemote(syncedVersion: String?): BackupClient.Snapshot? {
        try {
            val snapshot = backup.load(ifNoneMatch = syncedVersion)
            if (snapshot != null) return snapshot
            val blob = store.syncedBlob() ?: throw SyncException(SyncException.Code.LOCAL_STORAGE, "304 but no synced blob kept")
            return BackupClient.Snapshot(blob, syncedVersion!!)
        } catch (e: BackupError.NotFound) {
            return null
        } catch (e: BackupError) {
            throw backupFailure("loading the vault failed", e)
        }
    }

    private fun pairingKey(): DeviceKek? {
        val obj = store.read("pairing-key")?.let { Json.parse(it) as? JsonValue.Obj } ?: return null
        return DeviceKek.fromRaw(Base64Url.decode(obj["d"]!!.string!!)!!, Base64Url.decode(obj["x"]!!.string!!)!!, Base64Url.decode(obj["y"]!!.string!!)!!)
    }

    private fun ownKeys(): List<KeyEncryptionKey> {
        val pairing = pairingKey()
        // A device pairing again reads through its pairing key; without one, the lost key is what to report.
        val device = if (pairing == null) deviceKeys.current() else liveDeviceKey()
        return listOfNotNull(device, pairing)
    }

    /** This device's key, null when it has none or the platform lost it ([DeviceKeyStore.lastKekId] names that one). */
    private fun liveDeviceKey(): KeyEncryptionKey? = try { deviceKeys.current() } catch (e: VaultException.Invalidated) { null }

    /** Silent restore (seed §5): open, take the cloud's content; a device not yet in the vault enrolls itself. */
    private suspend fun restore(remote: BackupClient.Snapshot, start: Snapshot, opened: OpenedVault? = null): SyncReport {
        val vault = opened ?: open(remote.blob, ownKeys())
        val document = decode(vault.plaintext)
        writeBack(document, remote.blob, remote.syncId, start)
        val enrolment = enrollingThisDevice(vault.state) ?: return SyncReport.Restored(remote.syncId)
        return SyncReport.Restored(saveOver(vault.state, enrolment, document, remote.syncId, start))
    }

    /** This device's own entry enrolled into a state (seed §5), and the key that entry wraps to. */
    private class Enrolment(val state: VaultState, val key: KeyEncryptionKey)

    /**
     * [state] with this device's own (Keystore) key enrolled and the single-use pairing entry dropped; null when there
     * is nothing to do (the own entry is there and the pairing entry is not).
     *
     * The pairing request's key is never the device key, so after a pairing this device is a member only through that
     * pairing entry until this is saved. A restore applies it, and so does every sync round that saves while the
     * version it saves over still holds the pairing entry, as when the restore's save failed.
     * Throws [SyncException] when this device's key cannot be made or cannot wrap (`NOT_NOW`,
     * `AUTHENTICATION_CANCELED`, `KEY_INVALIDATED`).
     */
    private suspend fun enrollingThisDevice(state: VaultState): Enrolment? {
        val pairing = pairingKey()
        val hasPairingEntry = pairing != null && state.entries.any { it.kekId == pairing.kekId }
        val device = liveDeviceKey()
        val recordedDead = store.deadKekIds().filter { id -> id != device?.kekId && state.entries.any { it.kekId == id } }
        if (device != null && state.entries.any { it.kekId == device.kekId } && !hasPairingEntry && recordedDead.isEmpty()) {
            if (pairing != null) store.delete("pairing-key") // enrolled already: the pairing key has no use left
            // The save that enrolled this key dropped the dead entries with it: their record has no use left.
            store.forgetDeadKekIds()
            return null
        }
        // Issue 27 point 8: a device pairing again after its key was invalidated (or lost by the platform) gets a new
        // key, and its dead entry goes; a member whose key still works keeps it.
        val ownEntry = device?.let { d -> state.entries.firstOrNull { it.kekId == d.kekId } }
        val deadEntry = when {
            !hasPairingEntry -> null
            device == null -> deviceKeys.lastKekId()?.let { id -> state.entries.firstOrNull { it.kekId == id } }
            ownEntry != null && isInvalidated(device, ownEntry) -> ownEntry
            else -> null
        }
        val key = if (device == null || deadEntry != null) replacingDeadKey() else device
        val enrolled = if (state.entries.any { it.kekId == key.kekId }) state else envelopeCall { sealer.enroll(key, deviceLabel, state) }
        val leaving = listOfNotNull(deadEntry?.kekId, pairing?.kekId?.takeIf { hasPairingEntry }) + recordedDead
        return Enrolment(droppingEntries(leaving.filter { it != key.kekId }, enrolled), key)
    }

    /**
     * [state] without the entries of [kekIds] it holds, and no DEK rotation (Swift `droppingEntries`): these are this
     * device's own replaced keys (dead ones, or the pairing entry its own entry replaces), which no one else ever held.
     */
    private suspend fun droppingEntries(kekIds: List<String>, state: VaultState): VaultState {
        var remaining = state
        for (id in kekIds.distinct()) {
            if (remaining.entries.none { it.kekId == id }) continue
            val before = remaining
            remaining = envelopeCall { sealer.revoke(id, before, rotatingSecret = false) }
        }
        return remaining
    }

    /**
     * Saves [document] over [state], the state of [version], sealed over [enrolment]'s state when there is one (from
     * [enrollingThisDevice] on [state]); the saved version. Throws what [upload] throws.
     */
    private suspend fun saveOver(state: VaultState, enrolment: Enrolment?, document: VaultDocument, version: String, start: Snapshot): String {
        val sealed = envelopeCall {
            if (enrolment == null) sealer.seal(document.encoded(), state)
            else sealer.seal(document.encoded(), enrolment.state, listOf(enrolment.key), allowingPrompts = true)
        }
        val saved = upload(sealed, document, BackupClient.Precondition.IfMatch(version), start)
        // Only once the server holds the own entry: until then the pairing key is this device's way in.
        if (enrolment != null) store.delete("pairing-key")
        return saved
    }

    /**
     * Saves this device's enrolment into the synced [version], which the server still holds, when that version still
     * has the pairing entry (the restore's enrolment save failed); null when there is nothing to save.
     *
     * The synced blob's entry list is read without opening it, so an up-to-date sync of an enrolled device decrypts
     * nothing and prompts no one. While the server's hourly cap holds saves back the enrolment waits, as an edit does.
     * Throws what a push throws: [SyncException] `SERVER` or `OFFLINE` when the save fails, and what opening the
     * synced copy and [enrollingThisDevice] throw.
     */
    private suspend fun enrollInSyncedVersion(version: String, record: LocalVaultStore.Record, start: Snapshot): SyncReport? {
        val pairing = pairingKey() ?: return null
        val document = start.document ?: return null
        val synced = store.syncedBlob()?.let { runCatching { VaultEnvelope.parse(it) }.getOrNull() } ?: return null
        if (synced.entries.none { it.kekId == pairing.kekId }) return null
        val next = record.nextAttemptAt
        if (next != null && clock.nowMillis() < next) return null
        val state = openSynced()
        val enrolment = enrollingThisDevice(state) ?: return null
        return SyncReport.Pushed(saveOver(state, enrolment, document, version, start))
    }

    /** Whether [key] can no longer unwrap its own [entry] because the platform invalidated it (costs a prompt). */
    private suspend fun isInvalidated(key: KeyEncryptionKey, entry: WrappedKey): Boolean = try {
        key.unwrap(entry).fill(0)
        false
    } catch (e: VaultException.Invalidated) {
        true
    }

    /** What [mergeOutcome] decided for this device's unpushed edits against the cloud's content (Swift `MergeOutcome`). */
    private sealed class MergeOutcome {
        /** Save [document] over the cloud's version; [conflicts] are the items both sides changed. */
        class Save(val document: VaultDocument, val conflicts: List<String>) : MergeOutcome()
        /** Take the cloud's content as it is, dropping this device's edits (the app chose [ConflictResolution.KEEP_CLOUD]). */
        object TakeCloud : MergeOutcome()
    }

    /**
     * Settles [working] (this device's copy, with edits not yet pushed) against [cloud] (the server's content, saved at
     * [cloudUpdated]) over the last synced copy as their base: the three-way merge when no item changed on both sides,
     * else what [conflictHandler] decides. One decision for [merge] and [recover], so that a recovery resolves a
     * conflict exactly as a sync does rather than letting the later edit win unasked.
     * Throws [SyncException] `UNRESOLVED_CONFLICT` when items conflict and there is no handler.
     */
    private suspend fun mergeOutcome(working: VaultDocument, cloud: VaultDocument, cloudUpdated: Long): MergeOutcome {
        val base = store.syncedCopy() ?: VaultDocument()
        val localUpdated = working.items.values.map { it.modifiedAt }.fold(0L) { a, b -> maxOf(a, b) }
        val result = ThreeWayMerge.merge(base, working, cloud)
        if (result.conflicts.isEmpty()) return MergeOutcome.Save(result.merged, result.conflicts)
        val handler = conflictHandler ?: throw SyncException(SyncException.Code.UNRESOLVED_CONFLICT,
            "${result.conflicts.size} item(s) changed on both sides: ${result.conflicts.joinToString(", ")}")
        val items = result.conflicts.map { id ->
            val mine = working.items[id]
            val theirs = cloud.items[id]
            ConflictingItem(id, mine?.value, mine?.modifiedAt, theirs?.value, theirs?.modifiedAt)
        }
        return when (handler(ConflictContext(result.conflicts, localUpdated, cloudUpdated, items))) {
            ConflictResolution.KEEP_LOCAL -> MergeOutcome.Save(working, result.conflicts)
            ConflictResolution.KEEP_CLOUD -> MergeOutcome.TakeCloud
            ConflictResolution.MERGE -> MergeOutcome.Save(result.merged, result.conflicts)
        }
    }

    private suspend fun merge(
        remote: BackupClient.Snapshot, working: VaultDocument, start: Snapshot, openedAlready: OpenedVault? = null,
        savingNotBefore: Long? = null
    ): SyncReport {
        val opened = openedAlready ?: open(remote.blob, ownKeys())
        val cloud = decode(opened.plaintext)
        val outcome = mergeOutcome(working, cloud, opened.state.envelope.updatedAtMillis)
        val chosen = outcome as? MergeOutcome.Save ?: return restore(remote, start, opened)
        if (savingNotBefore != null) {
            // The hourly cap's pause: the merge waits as pending edits over the cloud version, now the synced one.
            writeBack(cloud, remote.blob, remote.syncId, start, pending = chosen.document, nextAttemptAt = savingNotBefore)
            return SyncReport.RateLimited(savingNotBefore)
        }
        // A device that confirmed its pairing with edits pending saves its enrollment and the merge together.
        val saved = try {
            saveOver(opened.state, enrollingThisDevice(opened.state), chosen.document, remote.syncId, start)
        } catch (e: Exception) {
            // The cloud version was opened, and the opener accepted its counter: it becomes the synced one, the merge
            // pending on top. Kept on the older one, every operation opening the synced copy until the next successful
            // save (for a 429, an hour) reported a rollback.
            writeBack(cloud, remote.blob, remote.syncId, start, pending = chosen.document)
            throw e
        }
        return SyncReport.Merged(saved, chosen.conflicts)
    }

    // MARK: devices and recovery

    /** This device's pairing request: a single-use P-256 key (kept sealed locally) that an enrolled device approves. */
    fun pairingRequest(): PairingRequest = guardedNow {
        val key = pairingKey() ?: DeviceKek.generate().also { k ->
            store.write("pairing-key", Json.write(Json.obj("d" to Json.str(Base64Url.encode(k.privateScalar())),
                "x" to Json.str(Base64Url.encode(k.publicKey.x)), "y" to Json.str(Base64Url.encode(k.publicKey.y)))))
        }
        PairingRequest(key.publicKey, deviceLabel)
    }

    /**
     * Enrolls the device that showed [request] (compare [PairingRequest.shortAuthenticationString] on both screens
     * first); a device that already has an entry keeps it and this only saves (as Swift's `approve`). Returns
     * [SyncReport.Approved] with the confirmation code to show: the new device's user types it there
     * ([confirmPairing]) so that the new device knows the vault it reads is this one (FORMAT.md §11.4). The code
     * covers the exact blob saved here and the new device's entry; it must never travel through the server.
     * Throws what [sync] throws; a save refused by the server's hourly cap is [SyncException.Code.SERVER] with
     * [BackupError.RateLimited], the next allowed attempt recorded ([status]) as a sync records it.
     */
    suspend fun approve(request: PairingRequest): SyncReport.Approved = exclusiveRecordingRateLimit { approveLocked(request) }

    private suspend fun approveLocked(request: PairingRequest): SyncReport.Approved {
        syncLocked()
        val version = store.record().syncedVersion ?: throw SyncException(SyncException.Code.NO_VAULT, "nothing synced yet")
        val start = snapshot()
        val working = start.document ?: throw SyncException(SyncException.Code.NO_VAULT, "nothing synced yet")
        val recipient = PublicKeyRecipient(request.publicKey)
        val synced = openSynced()
        val state = if (synced.entries.any { it.kekId == recipient.kekId }) synced else envelopeCall { sealer.enroll(recipient, request.label, synced) }
        val sealed = envelopeCall { sealer.seal(working.encoded(), state) }
        val saved = upload(sealed, working, BackupClient.Precondition.IfMatch(version), start)
        return SyncReport.Approved(saved, sealed.state.confirmationCode(recipient.kekId, sealed.blob)!!)
    }

    /**
     * The new device's side of FORMAT.md §11.4, after [sync] failed with [SyncException.Code.CONFIRMATION_REQUIRED]:
     * reads the server's blob through this device's entry (its pairing key's first, else any key it holds) without
     * storing anything, and only if [code] (as the approving device shows it, `"123 456"`; spaces and dashes ignored;
     * typed by the user, never sent through the server) is the one computed from that exact blob and entry pins the
     * vault's anchor, then restores or, when this device has edits it has not pushed, merges as [sync] does (asking
     * [conflictHandler] when both changed an item: [SyncReport.Merged]). When the save enrolling this device's own
     * key meets the server's hourly cap, the restore stands and the report is [SyncReport.RateLimited]: a sync after
     * that time enrolls it.
     *
     * A wrong code is [SyncException.Code.CONFIRMATION_MISMATCH]: nothing of the vault is stored, only the count of
     * wrong codes for this entry (kept in the [LocalVaultStore], so restarts do not reset it), and the message says to
     * revoke the entry just approved on the approving device, since an impostor may be enrolled. The
     * [MAX_WRONG_CODES]th ends the pairing: a device that is not yet a member (nothing synced or pinned) discards
     * its pairing key, so the approver's entry for it is useless, and pairing starts again with a new
     * [pairingRequest]; a member keeps its key (its wrong codes are counted, never void it, as in Swift). A correct
     * code resets the count. Not six digits:
     * [SyncException.Code.INVALID_INPUT], not counted.
     *
     * This is also how a device whose anti-rollback state was lost or replaced by an older copy gets back in (pair
     * it again): the typed code authenticates the vault, and the state is written anew from it.
     */
    suspend fun confirmPairing(code: String): SyncReport = exclusive {
        if (VaultSecrets.normalizeCode(code) == null)
            throw SyncException(SyncException.Code.INVALID_INPUT, "a confirmation code is six digits, as the approving device shows them")
        val start = snapshot()
        val remote = loadRemote(null) ?: throw SyncException(SyncException.Code.NO_VAULT, "nothing stored on the server")
        val pairing = pairingKey()
        // Issue 27 point 8: once approved, the pairing key alone reads the vault; this device's old key may be dead.
        val approved = pairing?.takeIf { p -> runCatching { VaultEnvelope.parse(remote.blob).entries.any { it.kekId == p.kekId } }.getOrDefault(false) }
        val keys = if (approved != null) listOf(approved) else listOfNotNull(pairing, liveDeviceKey())
        if (keys.isEmpty()) throw SyncException(SyncException.Code.NO_ACCESS, "this device has no key; make a pairing request first")
        val opened = reestablishing { via ->
            val unconfirmed = envelopeCall { via.openUnconfirmed(remote.blob, VAULT_ID, keys) }
            checkCode(via, unconfirmed, code, pairing)
            unconfirmed
        }
        // This device joined the vault just pinned: a create of its own whose outcome it never learnt is given up
        // (adopting it at the next sync would meet the other vault's anchor and fail).
        store.clearPendingCreate()
        // A member confirming again (its state lost, or offline past the pinned epoch) may hold edits it never pushed.
        val working = start.document
        // The enrolment's save may meet the hourly cap after the restore was written: reported as a sync's is, so the
        // enrolment waits for the next allowed save (enrollInSyncedVersion), as in Swift, where confirming syncs.
        reportingRateLimit {
            if (working != null && store.record().hasLocalEdits) merge(remote, working, start, opened) else restore(remote, start, opened)
        }
    }

    /** The §11.4 comparison with the cap on wrong codes ([confirmPairing]). */
    private suspend fun checkCode(via: VaultOpener, opened: OpenedVault, code: String, pairing: DeviceKek?) {
        // Counted per pairing request, whichever of this device's entries the blob was read through: a server serving
        // blobs for the pairing key and for the device key in turn must not start the count over at each switch.
        val kekId = pairing?.kekId ?: opened.kekId
        try {
            envelopeCall { via.confirmPairing(opened, VAULT_ID, code) }
        } catch (e: SyncException) {
            if (e.code != SyncException.Code.CONFIRMATION_MISMATCH) throw e
            val wrong = store.wrongConfirmationCodes(kekId) + 1
            // A member confirming again (something synced or pinned) keeps its key, as in Swift: counted, never voided.
            val member = store.syncedBlob() != null || store.record().syncedVersion != null ||
                runCatching { store.anchors.anchor(VAULT_ID) }.getOrNull() != null
            if (wrong < MAX_WRONG_CODES || member || pairing == null) {
                store.saveWrongConfirmationCodes(kekId, wrong)
                throw SyncException(SyncException.Code.CONFIRMATION_MISMATCH, "the code typed is not the one computed from the vault the server " +
                    "sent; nothing was stored. If it was typed as shown, $REVOKE_ADVICE" +
                    (if (member) "" else " (${MAX_WRONG_CODES - wrong} more tries with this pairing request)"), cause = e.cause)
            }
            store.delete("pairing-key")
            store.saveWrongConfirmationCodes(kekId, 0)
            throw SyncException(SyncException.Code.CONFIRMATION_MISMATCH, "$wrong wrong codes: this pairing request is void and its key " +
                "discarded (nothing was stored). $REVOKE_ADVICE; then pairing must start again with a new request", cause = e.cause)
        }
        store.saveWrongConfirmationCodes(kekId, 0)
    }

    /**
     * The code [approve] returned, again (Swift `confirmationCode(for:)`): computed over the synced blob's exact bytes
     * and its entry for [request]'s key, so it is the new device's code while that blob is the server's newest. Show it
     * on this screen only; it must never travel through the server.
     */
    suspend fun confirmationCode(request: PairingRequest): String = confirmationCode(PublicKeyRecipient(request.publicKey).kekId)

    /** As [confirmationCode] for a request, for the entry [kekId] of any key kind (a member that must confirm again). */
    suspend fun confirmationCode(kekId: String): String = exclusive {
        val blob = store.syncedBlob() ?: throw SyncException(SyncException.Code.NO_VAULT, "nothing synced yet")
        val state = open(blob, ownKeys()).state
        if (state.entries.none { it.kekId == kekId })
            throw SyncException(SyncException.Code.INVALID_INPUT, "the synced vault has no entry for this device: approve the request first")
        state.confirmationCode(kekId, blob)
            ?: throw SyncException(SyncException.Code.NO_VAULT, "the synced vault has no vault_id yet: approve the request first")
    }

    /** The anchor this device pinned (FORMAT.md §11.2); its [VaultAnchor.shortFingerprint] is what two members compare (§11.6). */
    fun anchor(): VaultAnchor? = guardedNow { store.anchors.anchor(VAULT_ID) }

    /**
     * What two devices compare to see a fork (FORMAT.md §11.6, §11.10), as Swift's `vaultFingerprint()`: the anchor's
     * fingerprint and the newest version's digest, `epoch 3: 1a2b 3c4d 5e6f 7a8b, version 42: 9c0d 1e2f 3a4b 5c6d`; null
     * before this device pinned the vault. Each version names its predecessor's digest, so equal texts mean one history.
     */
    fun fingerprint(): String? = guardedNow {
        store.anchors.anchor(VAULT_ID)?.let { anchor ->
            val counter = store.counters.highest(VAULT_ID)
            val head = store.counters.acceptedDigest(VAULT_ID, counter)
            "epoch ${anchor.epoch}: ${anchor.shortFingerprint}" + (head?.let { ", version $counter: ${VaultAnchor.grouped(it)}" } ?: "")
        }
    }

    /**
     * After the device key was invalidated (or on a new device): open with a recovery code or passphrase, get a new
     * device key (this device's dead entry removed). Edits this device made and never pushed are kept: settled against
     * the server's content as [sync] merges, asking [conflictHandler] when both changed an item (its choice saved with
     * the new key). Throws [SyncException] `NO_ACCESS` when the key opens nothing, `UNRESOLVED_CONFLICT` when items
     * conflict and there is no handler (no key was made then, and a later recovery still removes the dead entry), and
     * the others [sync] throws.
     */
    suspend fun recover(recoveryKey: KeyEncryptionKey): SyncReport = recover { recoveryKey }

    /** As [recover], with the vault's passphrase entry: Argon2id runs (on the I/O dispatcher) with the entry's checked costs. */
    suspend fun recover(passphrase: String): SyncReport = recover { envelope -> PassphraseKek.unlock(passphrase, envelope) }

    private suspend fun recover(keyFor: (VaultEnvelope) -> KeyEncryptionKey): SyncReport = exclusiveRecordingRateLimit { recoverLocked(keyFor) }

    private suspend fun recoverLocked(keyFor: (VaultEnvelope) -> KeyEncryptionKey): SyncReport {
        val start = snapshot()
        val remote = loadRemote(null) ?: throw SyncException(SyncException.Code.NO_VAULT, "nothing stored on the server")
        val recoveryKey = envelopeCall { keyFor(VaultEnvelope.parse(remote.blob)) }
        // A lost or rolled-back anti-rollback state is written anew from what the recovery key's entry authenticates.
        val opened = reestablishing { via -> open(remote.blob, listOf(recoveryKey), via) }
        // As after a pairing: this device now belongs to the vault it recovered, not to a create of its own.
        store.clearPendingCreate()
        val cloud = decode(opened.plaintext)
        // Edits made here before the key died are settled against the cloud as a sync's merge settles them (the
        // conflict handler asked, UNRESOLVED_CONFLICT without one), not dropped. Decided before a new key is made: a
        // recovery that stops here must leave the dead key's record, so that the next one still removes its entry.
        val local = start.document
        val outcome = if (local != null && store.record().hasLocalEdits) mergeOutcome(local, cloud, opened.state.envelope.updatedAtMillis) else null
        val document = (outcome as? MergeOutcome.Save)?.document ?: cloud
        val device = replacingDeadKey()
        val remaining = droppingEntries(store.deadKekIds().filter { it != device.kekId }, opened.state)
        val state = envelopeCall { sealer.enroll(device, deviceLabel, remaining) }
        val sealed = envelopeCall { sealer.seal(document.encoded(), state, listOf(device, recoveryKey), allowingPrompts = true) }
        val saved = upload(sealed, document, BackupClient.Precondition.IfMatch(remote.syncId), start)
        store.forgetDeadKekIds()
        return SyncReport.Restored(saved)
    }

    /**
     * A new key in place of this device's current or dead one, whose `kek_id` is recorded first ([LocalVaultStore.deadKekIds]):
     * the save that drops its entry may come only at a later attempt, when the platform names the new key as the last.
     */
    private suspend fun replacingDeadKey(): KeyEncryptionKey {
        deviceKeys.lastKekId()?.let { store.rememberDeadKekId(it) }
        return deviceKeys.create()
    }

    /**
     * Removes an entry and rotates the DEK so later versions are out of the revoked holder's reach.
     *
     * With [newRecoveryPaths] every recovery-code and passphrase entry (those [devices] marks as recovery paths) is
     * removed and the new ones enrolled, in the same single save that rotates the DEK and the vault secret: a revoked
     * device that ever saw the old code or passphrase would otherwise open every later version with it.
     * Throws [SyncException] `INVALID_INPUT` for an unknown or last entry, and the others [sync] throws; a save
     * refused by the server's hourly cap is `SERVER` with [BackupError.RateLimited], the next allowed attempt recorded
     * as a sync records it (the revoke is not made later by itself: call it again then).
     */
    suspend fun revoke(kekId: String, additionalKeys: List<KeyWrapping> = emptyList(), newRecoveryPaths: List<Recipient>? = null): SyncReport =
        exclusiveRecordingRateLimit { rotateLocked(listOf(kekId), additionalKeys, newRecoveryPaths) }

    /**
     * Replaces every recovery-code and passphrase entry by [newPaths] and rotates the DEK and the vault secret in one
     * save, revoking no device: a revoked device that ever saw the old code or passphrase would otherwise open every
     * later version, and whoever learnt them opens nothing saved from now on.
     * Throws [SyncException] `INVALID_INPUT` for an empty [newPaths] (revoke a path with [revoke]), and the others [sync] throws.
     */
    suspend fun replaceRecoveryPaths(newPaths: List<Recipient>): SyncReport {
        if (newPaths.isEmpty()) throw SyncException(SyncException.Code.INVALID_INPUT, "give at least one new recovery path")
        return exclusiveRecordingRateLimit { rotateLocked(emptyList(), emptyList(), newPaths) }
    }

    /** Drops [kekIds] (and, given [newRecoveryPaths], every recovery path, then enrolls the new ones), then rotates the DEK and the vault secret in one save. */
    private suspend fun rotateLocked(kekIds: List<String>, additionalKeys: List<KeyWrapping>, newRecoveryPaths: List<Recipient>?): SyncReport {
        syncLocked()
        val record = store.record()
        val version = record.syncedVersion ?: throw SyncException(SyncException.Code.NO_VAULT, "nothing synced to revoke from")
        val start = snapshot()
        val working = start.document ?: throw SyncException(SyncException.Code.NO_VAULT, "nothing synced to revoke from")
        var remaining = openSynced()
        val replaced = if (newRecoveryPaths == null) emptyList() else devices().filter { it.isRecoveryPath }.map { it.kekId }
        // A device's other entries go with it: an iPhone approved again while a member holds its self-ECDH entry and an
        // ECDH-ES entry to the same key's public half, and either opens later versions for it (as in Swift). Only from
        // the entry its holder wrote: anyone can show a pairing request with another phone's public key, so revoking a
        // public-key entry must not shut out the member whose own entry holds that key.
        val revokedKeys = remaining.entries.filter { it.kekId in kekIds && it.scheme !is Scheme.EcdhEsA256kw }.mapNotNull { it.p256RecipientKey }.toSet()
        val sameKeys = remaining.entries.filter { it.scheme is Scheme.EcdhEsA256kw && it.p256RecipientKey in revokedKeys }.map { it.kekId }
        try {
            for (id in kekIds + (sameKeys + replaced).filter { it !in kekIds }.distinct()) remaining = sealer.revoke(id, remaining)
        } catch (e: VaultException) {
            throw SyncException(SyncException.Code.INVALID_INPUT, e.message ?: "")
        }
        for (path in newRecoveryPaths ?: emptyList()) {
            val before = remaining
            remaining = envelopeCall { sealer.enroll(path.key, path.label, before) }
        }
        val device = deviceKeys.current() ?: throw SyncException(SyncException.Code.NO_ACCESS, "this device has no key")
        val wrapping = listOf(device) + additionalKeys + (newRecoveryPaths ?: emptyList()).map { it.key }
        val sealed = envelopeCall { sealer.rotateDek(working.encoded(), remaining, wrapping, allowingPrompts = true, rotateVaultSecret = true) }
        return SyncReport.Rotated(upload(sealed, working, BackupClient.Precondition.IfMatch(version), start), sealed.skipped ?: emptyList())
    }

    // MARK: history and erasure

    /** The versions the server keeps, newest first (Swift `history()`). Throws [SyncException] `SERVER`, `OFFLINE`. */
    suspend fun history(): List<BackupClient.Version> = guarded {
        try { backup.versions() } catch (e: BackupError) { throw backupFailure("listing the versions failed", e) }
    }

    /**
     * Saves the content of the kept version [syncId] (from [history]) again, as a new version above the current one.
     *
     * Pending edits are saved first (so they stay in the history). The old version is opened with every check but the
     * anti-rollback counter's (an older version has a lower counter by design), and its items are written over the
     * current document as new changes (items it lacks are deleted), so every device takes the restore as the newest
     * content; it is sealed over the current version (current entries and DEK, a higher counter), so no reader sees a
     * rollback. The save names the current version (`If-Match`): a device that saved meanwhile makes this fail rather
     * than be overwritten. Throws [SyncException] `SERVER` ([BackupError.NotFound] for a version not kept, `Conflict`
     * for a racing save; [BackupError.RateLimited] for the hourly cap, the next allowed attempt recorded as a sync
     * records it), `NO_ACCESS` when this device has no entry in that version, `TAMPERED`, and what [sync] throws.
     */
    suspend fun restoreVersion(syncId: String): SyncReport.RestoredVersion = exclusiveRecordingRateLimit { restoreVersionLocked(syncId) }

    private suspend fun restoreVersionLocked(syncId: String): SyncReport.RestoredVersion {
        syncLocked()
        val version = store.record().syncedVersion ?: throw SyncException(SyncException.Code.NO_VAULT, "nothing synced to restore over")
        val start = snapshot()
        val current = start.document ?: throw SyncException(SyncException.Code.NO_VAULT, "nothing synced to restore over")
        val old = try { backup.load(syncId = syncId) } catch (e: BackupError) { throw backupFailure("loading version $syncId failed", e) }
            ?: throw SyncException(SyncException.Code.SERVER, "no content for version $syncId")
        val state = openSynced()
        val oldOpened = envelopeCall { opener.openPastVersion(old.blob, VAULT_ID, ownKeys(), state) }
        val restored = current.replacingContent(decode(oldOpened.plaintext), clock.nowMillis())
        val sealed = envelopeCall { sealer.seal(restored.encoded(), state) }
        return SyncReport.RestoredVersion(syncId, upload(sealed, restored, BackupClient.Precondition.IfMatch(version), start))
    }

    /**
     * Erases the vault and every kept version from the server (right to erasure), then this device's copies and the
     * vault's anti-rollback state (a new vault's first versions would look like a rollback here otherwise). Other
     * devices find no vault at their next sync; the device key stays, so this device can create or join a vault later.
     * Throws [SyncException] `SERVER` or `OFFLINE` when the server did not erase (nothing local changed then),
     * `LOCAL_STORAGE`; what [sync] throws when the sync before the erasure fails otherwise than for want of a readable
     * vault (`UNRESOLVED_CONFLICT`, `AUTHENTICATION_CANCELED`, `NOT_NOW`, `OFFLINE`, `SERVER`): nothing is erased then.
     */
    suspend fun eraseAccount(): Unit = exclusive {
        // A member proves it may erase by the write key of the version it reads now (FORMAT.md §11.8); a device that
        // cannot read the vault sends no proof, and the server then erases only a vault that names no write key.
        // Any other failure of the sync (a conflict, a cancelled prompt, the network) is thrown as it is, nothing
        // erased: erasing anyway sent no proof, or one over an older version, and a member was told by the 403 that it
        // had been removed from its own vault.
        // Also while the hourly cap holds saves back: that sync loads all the same, so the proof goes over the version
        // the server holds (one over a replaced version is refused as if this device had been removed).
        val member = try {
            syncLocked()
            store.record().syncedVersion?.let { version -> version to openSynced().secrets }
        } catch (e: SyncException) {
            if (e.code !in CANNOT_READ) throw e
            null
        }
        try { backup.erase(member?.second, member?.first) } catch (e: BackupError) { throw backupFailure("erasing the vault failed", e) }
        synchronized(editLock) {
            store.eraseVault()
            generation++
        }
        Unit
    }

    // MARK: devices and key health

    /** The vault's entries as the last synced blob lists them. Throws [SyncException] `NO_VAULT`, `TAMPERED`, `LOCAL_STORAGE`. */
    fun devices(): List<DeviceEntry> = guardedNow {
        val blob = store.syncedBlob() ?: throw SyncException(SyncException.Code.NO_VAULT, "sync first")
        val envelope = try { VaultEnvelope.parse(blob) } catch (e: VaultException) { throw SyncException(SyncException.Code.TAMPERED, e.message ?: "") }
        val own = liveDeviceKey()?.kekId
        envelope.entries.map { entry ->
            val recovery = entry.scheme is Scheme.A256kwRecoveryCode || entry.scheme is Scheme.A256kwPassphrase
            DeviceEntry(entry.kekId, entry.label ?: "", entry.scheme.alg ?: "seed", entry.created, entry.kekId == own, recovery,
                if (entry.kekId == own) deviceKeys.storageLevel() else null)
        }
    }

    /** How many ways into the vault remain, with a warning when too few. Throws what [devices] throws. */
    fun keyHealth(): KeyHealth = guardedNow {
        val entries = devices()
        val deviceCount = entries.count { !it.isRecoveryPath }
        val recovery = entries.count { it.isRecoveryPath }
        val warning = when {
            deviceCount + recovery < 2 -> "only one way into this vault: losing it loses the vault; add a recovery code or another device"
            recovery == 0 -> "no recovery code or passphrase: if every device is lost, the vault is lost"
            else -> null
        }
        KeyHealth(entries.filter { it.isThisDevice }.map { it.kekId }, deviceCount, recovery, warning)
    }

    // MARK: plumbing

    private suspend fun openSynced(): VaultState {
        val blob = store.syncedBlob() ?: throw SyncException(SyncException.Code.NO_VAULT, "nothing synced yet")
        return open(blob, ownKeys()).state
    }

    /**
     * Runs [opening] with the engine's opener over the local anti-rollback state; when the store refuses that state
     * (lost after a sync, or an older copy, see [LocalVaultStore]) against an empty one instead, and only once it
     * succeeded writes what it learnt (counter, anchor) as the new state. For [recover] and [confirmPairing] only: the
     * recovery key's symmetric entry or the typed code authenticates the vault without the old state.
     */
    private suspend fun reestablishing(opening: suspend (VaultOpener) -> OpenedVault): OpenedVault {
        val refused = try { store.checkAntiRollbackState(); false } catch (e: SyncException) { true }
        if (!refused) return opening(opener)
        val fresh = InMemoryCounterStore()
        val opened = opening(VaultOpener(fresh, fresh, opener.maxBlobBytes))
        val counter = fresh.highest(VAULT_ID)
        store.reestablishAntiRollbackState(if (counter > 0) mapOf(VAULT_ID to counter) else emptyMap(),
            fresh.anchor(VAULT_ID)?.let { mapOf(VAULT_ID to it) } ?: emptyMap(),
            fresh.seenDigests(VAULT_ID).let { if (it.isEmpty()) emptyMap() else mapOf(VAULT_ID to it) })
        return opened
    }

    private suspend fun open(blob: ByteArray, keys: List<KeyEncryptionKey>, via: VaultOpener = opener): OpenedVault {
        if (keys.isEmpty()) throw SyncException(SyncException.Code.NO_ACCESS, "this device has no key; pair it or recover")
        try {
            // FORMAT.md §11.3: the opener refuses a pre-anchor blob read through a public-key entry (unconfirmedVault,
            // CONFIRMATION_REQUIRED here): a member device must sync it first, then confirm this device with its code.
            return envelopeCall { via.open(blob, VAULT_ID, keys) }
        } catch (e: SyncException) {
            // A device that was a member of the last version it synced has been revoked, not "never paired": say who.
            val device = liveDeviceKey()
            if (e.code != SyncException.Code.NO_ACCESS || e.cause !is VaultException.NoMatchingKey || device == null) throw e
            val synced = store.syncedBlob()?.let { runCatching { VaultEnvelope.parse(it) }.getOrNull() } ?: throw e
            if (synced.entries.none { it.kekId == device.kekId }) throw e
            val by = runCatching { VaultEnvelope.parse(blob).hint }.getOrNull()
            // The writer's hint is not authenticated for a reader without the key: shown as the blob states it.
            throw SyncException(SyncException.Code.REMOVED_FROM_VAULT, "this device's key was removed from the vault" +
                (if (by != null) " by \"$by\"" else "") + ": pair it again or recover", cause = e)
        }
    }

    private suspend fun upload(sealed: SealedVault, document: VaultDocument, precondition: BackupClient.Precondition, start: Snapshot): String {
        val version = try { backup.save(sealed.blob, precondition, sealed.basis, sealed.state.secrets) } catch (e: BackupError) {
            (if (precondition is BackupClient.Precondition.IfNoneStored && mayHaveBeenStored(e)) storedVersion(sealed.blob) else null)
                ?: throw backupFailure("saving the vault failed", e)
        }
        sealer.markAccepted(sealed)
        writeBack(document, sealed.blob, version, start)
        return version
    }

    /**
     * Whether a create that failed with [e] may be on the server all the same: its answer was lost (a network error,
     * a 5xx from a proxy after the server stored it), or a resend of it met the 409 its own first attempt caused.
     * Only a create needs this: its secret and anchor exist nowhere else, so unless they are recorded here the vault
     * on the server is no one's; a lost answer to any other save costs one extra merged version, no more.
     */
    private fun mayHaveBeenStored(e: BackupError) =
        e is BackupError.Conflict || e is BackupError.Transport || e is BackupError.ServerUnavailable

    /** As [versionHolding], null also when that cannot be learnt now. */
    private suspend fun storedVersion(blob: ByteArray): String? = try { versionHolding(blob) } catch (e: BackupError) { null }

    /**
     * The version the server holds when it holds exactly [blob] (it stores the bytes it was sent); null when it holds
     * another or none. Throws [BackupError] when it cannot be asked.
     */
    private suspend fun versionHolding(blob: ByteArray): String? = try {
        backup.load()?.takeIf { it.blob.contentEquals(blob) }?.syncId
    } catch (e: BackupError.NotFound) {
        null
    }

    private fun decode(plaintext: ByteArray): VaultDocument = try { VaultDocument.parse(plaintext) } catch (e: IllegalArgumentException) {
        throw SyncException(SyncException.Code.INVALID_INPUT, "the vault's contents are not a keyed vault document")
    }

    private suspend fun <T> envelopeCall(body: suspend () -> T): T {
        try {
            return body()
        } catch (e: VaultException) {
            throw envelopeFailure(e)
        }
    }

    /** Runs [body] on [ioDispatcher], one server operation at a time, with only [SyncException] leaving it. */
    private suspend fun <T> exclusive(body: suspend () -> T): T = guarded { mutex.withLock { body() } }

    /** Runs [body] on [ioDispatcher] with only [SyncException] (or CancellationException) leaving it. */
    private suspend fun <T> guarded(body: suspend () -> T): T = withContext(ioDispatcher) {
        try {
            body()
        } catch (e: CancellationException) {
            // Raw only when this caller was cancelled: thrown by the app's own code (a conflict handler's `withTimeout`,
            // an authenticator's cancelled continuation) while the caller goes on, it is that code failing.
            throw if (callerIsCancelled()) e else sealedFailure(e)
        } catch (e: Exception) {
            throw sealedFailure(e)
        }
    }

    /** Runs [body] on the caller's thread with only [SyncException] leaving it. */
    private inline fun <T> guardedNow(body: () -> T): T = try { body() } catch (e: Exception) { throw sealedFailure(e) }

    /**
     * [e] as the [SyncException] an app decides on; a SyncException as it is. A CancellationException reaching here is
     * the app's own code failing ([guarded] lets a cancelled caller's through first; a plain call has no caller to cancel).
     */
    private fun sealedFailure(e: Exception): SyncException = when (e) {
        is SyncException -> e
        is VaultException -> envelopeFailure(e)
        is BackupError -> backupFailure("the server call failed", e)
        // The app's own code (a DeviceKeyStore, an authenticator, a conflict handler, an edit) failed: reported by
        // class name only, as its message could hold anything.
        else -> SyncException(SyncException.Code.LOCAL_STORAGE, "unexpected ${e.javaClass.simpleName}", cause = e)
    }

    private fun backupFailure(what: String, e: BackupError): SyncException = SyncException(when (e) {
        is BackupError.Transport -> SyncException.Code.OFFLINE
        is BackupError.BlobTooLarge -> SyncException.Code.TOO_LARGE
        // The server wants a writer proof (FORMAT.md §11.8) this device cannot give: it is no member of the stored version.
        is BackupError.WriterRefused -> SyncException.Code.REMOVED_FROM_VAULT
        else -> SyncException.Code.SERVER
    }, what, e)

    private fun envelopeFailure(e: VaultException): SyncException {
        val code = when (e) {
            is VaultException.Rollback, is VaultException.Downgrade -> SyncException.Code.ROLLBACK_DETECTED
            is VaultException.ForkDetected -> SyncException.Code.FORK_DETECTED
            is VaultException.CounterJump -> SyncException.Code.TAMPERED
            is VaultException.WrongVault, is VaultException.WriterNotMember -> SyncException.Code.TAMPERED
            is VaultException.UnconfirmedVault -> SyncException.Code.CONFIRMATION_REQUIRED
            is VaultException.PairingMismatch -> SyncException.Code.CONFIRMATION_MISMATCH
            is VaultException.RecipientsAltered, is VaultException.TimestampAltered, is VaultException.HintAltered,
            is VaultException.CounterAltered, is VaultException.CiphertextAltered, is VaultException.Malformed,
            is VaultException.InvalidShape, is VaultException.InvalidJson, is VaultException.UnsupportedAlgorithm,
            is VaultException.WeakParameters, is VaultException.WorkLimitExceeded -> SyncException.Code.TAMPERED
            is VaultException.NoMatchingKey, is VaultException.UnwrapFailed -> SyncException.Code.NO_ACCESS
            is VaultException.Invalidated -> SyncException.Code.KEY_INVALIDATED
            is VaultException.UserCanceled -> SyncException.Code.AUTHENTICATION_CANCELED
            is VaultException.KeyNotNow -> SyncException.Code.NOT_NOW
            is VaultException.BlobTooLarge -> SyncException.Code.TOO_LARGE
            else -> SyncException.Code.LOCAL_STORAGE
        }
        return SyncException(code, e.message ?: e.code, cause = e)
    }
}
