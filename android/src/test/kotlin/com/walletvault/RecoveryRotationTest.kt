package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import java.io.File
import java.nio.file.Files
import javax.crypto.spec.SecretKeySpec

/** Issue 26 point 5: revoking a device can replace the recovery paths it may have seen, and so can replaceRecoveryPaths. */
class RecoveryRotationTest {
    private val server = FakeServer()
    private val clock = FakeClock()

    /** A device key another member can re-wrap for in a rotation (its entry names its public key), as a Swift device's. */
    class P256DeviceKeys : DeviceKeyStore {
        var kek: DeviceKek? = null
        override fun current(): KeyEncryptionKey? = kek
        override suspend fun create(): KeyEncryptionKey = DeviceKek.generate().also { kek = it }
    }

    inner class Device(val label: String, val keys: DeviceKeyStore = TestDeviceKeys()) {
        val directory: File = Files.createTempDirectory("wv-rot-$label").toFile()
        val atRest = SecretKeySpec(Crypto.randomBytes(32), "AES")
        val tokens = SessionTokenProvider("http://fake", { "oidc-ok" }, server, clock)
        val engine = VaultSyncEngine(LocalVaultStore(directory, atRest), BackupClient("http://fake", tokens, server, clock), keys, label, clock = clock)
        fun sync() = runSuspending { engine.sync() }
        fun set(id: String, value: String) { clock.now += 1000; engine.edit { d, now -> d.set(id, Json.str(value), now) } }
        fun value(id: String) = engine.document()?.liveValues?.get(id)?.string
        fun recover(code: RecoveryCode) = runSuspending { engine.recover(RecoveryCodeKek(RecoveryCode.parse(code.formatted))) }
        /** Another engine over this device's files and keys, whose conflict handler is [handler] (the app restarted with one). */
        fun engineWith(handler: suspend (ConflictContext) -> ConflictResolution) = VaultSyncEngine(LocalVaultStore(directory, atRest),
            BackupClient("http://fake", tokens, server, clock), keys, label, conflictHandler = handler, clock = clock)
    }

    private fun expectSync(code: SyncException.Code, block: () -> Unit): SyncException {
        try { block() } catch (e: SyncException) { assertEquals(code, e.code, e.message); return e }
        fail<Unit>("expected $code")
        throw AssertionError()
    }

    /** A creates with a recovery code and approves [others]; each confirms and restores. */
    private fun vault(vararg others: Device): Pair<Device, RecoveryCode> {
        val a = Device("A")
        val code = RecoveryCode.generate()
        assertTrue(runSuspending { a.engine.createVault(listOf(Recipient(RecoveryCodeKek(code), "Recovery code"))) } is SyncReport.Created)
        a.set("passport", "P-1")
        assertTrue(a.sync() is SyncReport.Pushed)
        for (other in others) {
            val approved = runSuspending { a.engine.approve(PairingRequest.parse(other.engine.pairingRequest().encoded)) }
            assertTrue(runSuspending { other.engine.confirmPairing(approved.confirmationCode) } is SyncReport.Restored)
            assertEquals("P-1", other.value("passport"))
            a.sync()
        }
        return Pair(a, code)
    }

    /**
     * B, whose key then died, edited the passport without pushing it; A changed the passport afterwards and saved:
     * a recovery on B meets a conflict on "passport", which A's later edit would win if merged silently. B and its dead
     * `kek_id`, A, the recovery code.
     */
    private fun deadKeyWithAnUnpushedEditTheCloudChangedToo(): DeadKeyConflict {
        val b = Device("B")
        val (a, code) = vault(b)
        val dead = b.keys.current()!!.kekId
        b.set("passport", "P-B")
        (b.keys as TestDeviceKeys).key!!.invalidate()
        a.set("passport", "P-A")
        assertTrue(a.sync() is SyncReport.Pushed)
        expectSync(SyncException.Code.KEY_INVALIDATED) { b.sync() }
        return DeadKeyConflict(b, dead, a, code)
    }

    /** That [member]'s vault holds [recovered]'s new key and no longer the entry of its dead key [dead]. */
    private fun expectDeadEntryReplaced(member: Device, dead: String, recovered: Device) {
        val entries = member.engine.devices()
        assertFalse(entries.any { it.kekId == dead }, "the dead entry stayed")
        assertTrue(entries.any { it.kekId == recovered.keys.current()!!.kekId }, "the new key is not in the vault")
    }

    private class DeadKeyConflict(val b: Device, val dead: String, val a: Device, val code: RecoveryCode)

    /**
     * Recovery settles the device's unpushed edits against the cloud as a sync's merge does (Swift's `recover` uses
     * `mergeOutcome`): the conflict handler is asked, and its choice wins. Before, Kotlin merged silently (the later
     * edit won) and never asked, so the handler was not called and A's "P-A" replaced the "P-B" the user chose to keep.
     */
    @Test
    fun recoveryAsksTheConflictHandlerAndItsChoiceWins() {
        val setup = deadKeyWithAnUnpushedEditTheCloudChangedToo()
        val asked = ArrayList<List<String>>()
        val recovering = setup.b.engineWith { context -> asked.add(context.conflictingItems); ConflictResolution.KEEP_LOCAL }
        val report = runSuspending { recovering.recover(RecoveryCodeKek(RecoveryCode.parse(setup.code.formatted))) }
        assertTrue(report is SyncReport.Restored, report.toString())
        assertEquals(listOf(listOf("passport")), asked, "the handler was not asked about the conflicting item")
        assertEquals("P-B", recovering.document()!!.liveValues["passport"]!!.string, "the handler's choice (this device's edit) lost")
        setup.a.sync()
        assertEquals("P-B", setup.a.value("passport"), "the saved recovery does not hold the choice")
        expectDeadEntryReplaced(setup.a, setup.dead, setup.b)
    }

    /**
     * A recovery whose save fails has already made the new key; its retry still drops the dead entry (as Swift's
     * `dead-kek-ids` does). Before, the retry took the new key's id for the dead one, and the dead entry stayed in the
     * vault, re-wrapped at every rotation (diff review finding 3).
     */
    @Test
    fun aRecoveryWhoseSaveFailedDropsTheDeadEntryWhenRetried() {
        val b = Device("B")
        val (a, code) = vault(b)
        val dead = b.keys.current()!!.kekId
        (b.keys as TestDeviceKeys).key!!.invalidate()
        // Every attempt at the recovery's save fails after its load succeeded: the new key is made by then.
        server.beforeSaveStored = { throw java.io.IOException("connection reset") }
        expectSync(SyncException.Code.OFFLINE) { b.recover(code) }
        server.beforeSaveStored = null
        assertTrue(b.recover(code) is SyncReport.Restored)
        a.sync()
        expectDeadEntryReplaced(a, dead, b)
    }

    /**
     * Without a handler a conflicting recovery is `UNRESOLVED_CONFLICT`, as a sync's merge, decided before a new device
     * key is made: the dead key's record (its `kek_id`) stays, nothing is saved, the edit stays pending, and a later
     * recovery with a handler still removes the dead entry. Before, Kotlin merged silently and the recovery succeeded.
     */
    @Test
    fun recoveryWithoutAHandlerIsAnUnresolvedConflictAndALaterOneWithAHandlerWorks() {
        val setup = deadKeyWithAnUnpushedEditTheCloudChangedToo()
        val saves = server.saves.get()
        expectSync(SyncException.Code.UNRESOLVED_CONFLICT) { setup.b.recover(setup.code) }
        assertEquals(setup.dead, setup.b.keys.lastKekId(), "a new device key was made before the conflict was decided")
        assertEquals(saves, server.saves.get(), "the failed recovery saved something")
        assertEquals("P-B", setup.b.value("passport"))
        assertTrue(setup.b.engine.status().hasLocalEdits, "the unpushed edit is no longer pending")

        val asked = ArrayList<List<String>>()
        val recovering = setup.b.engineWith { context -> asked.add(context.conflictingItems); ConflictResolution.KEEP_CLOUD }
        assertTrue(runSuspending { recovering.recover(RecoveryCodeKek(RecoveryCode.parse(setup.code.formatted))) } is SyncReport.Restored)
        assertEquals(listOf(listOf("passport")), asked)
        assertEquals("P-A", recovering.document()!!.liveValues["passport"]!!.string, "the cloud's value was not kept")
        assertFalse(recovering.status().hasLocalEdits)
        setup.a.sync()
        assertEquals("P-A", setup.a.value("passport"))
        expectDeadEntryReplaced(setup.a, setup.dead, setup.b)
    }

    @Test
    fun revokingWithANewRecoveryCodeRetiresTheOldOne() {
        val b = Device("B")
        val (a, oldCode) = vault(b)
        val revoked = b.keys.current()!!.kekId
        val newCode = RecoveryCode.generate()
        val report = runSuspending { a.engine.revoke(revoked, newRecoveryPaths = listOf(Recipient(RecoveryCodeKek(newCode), "New recovery code"))) }
        assertTrue(report is SyncReport.Rotated, report.toString())
        assertEquals(emptyList<SkippedEntry>(), (report as SyncReport.Rotated).skipped, "the new code's entry is wrapped, the old one dropped")
        val envelope = VaultEnvelope.parse(server.current!!.blob)
        assertEquals(2L, envelope.epoch, "the vault secret rotated in the same save")
        val entries = a.engine.devices()
        assertFalse(entries.any { it.kekId == revoked }, "the revoked entry is gone")
        assertEquals(listOf("New recovery code"), entries.filter { it.isRecoveryPath }.map { it.label }, "exactly one recovery path")
        expectSync(SyncException.Code.REMOVED_FROM_VAULT) { b.sync() }

        val fresh = Device("C")
        expectSync(SyncException.Code.NO_ACCESS) { fresh.recover(oldCode) }
        assertTrue(fresh.recover(newCode) is SyncReport.Restored)
        assertEquals("P-1", fresh.value("passport"))
    }

    @Test
    fun replacingTheRecoveryPathsKeepsTheOtherDevices() {
        // B's entry names its public key, so A re-wraps the new DEK for it. (A Keystore device's A256GCMKW entry
        // cannot be re-wrapped by another member: a rotation reports it in `skipped`, as revoke always has.)
        val b = Device("B", P256DeviceKeys())
        val (a, oldCode) = vault(b)
        expectSync(SyncException.Code.INVALID_INPUT) { runSuspending { a.engine.replaceRecoveryPaths(emptyList()) } }
        val newCode = RecoveryCode.generate()
        val report = runSuspending { a.engine.replaceRecoveryPaths(listOf(Recipient(RecoveryCodeKek(newCode), "New recovery code"))) }
        assertTrue(report is SyncReport.Rotated, report.toString())
        assertEquals(emptyList<SkippedEntry>(), (report as SyncReport.Rotated).skipped)
        assertEquals(2L, VaultEnvelope.parse(server.current!!.blob).epoch)
        val entries = a.engine.devices()
        assertEquals(listOf("New recovery code"), entries.filter { it.isRecoveryPath }.map { it.label })
        assertEquals(2, entries.count { !it.isRecoveryPath }, "no device was revoked")

        // B re-wrapped through its public entry: it still syncs and reads a later edit.
        b.sync()
        a.set("passport", "P-2")
        assertTrue(a.sync() is SyncReport.Pushed)
        assertTrue(b.sync() is SyncReport.Restored)
        assertEquals("P-2", b.value("passport"))

        val fresh = Device("C")
        expectSync(SyncException.Code.NO_ACCESS) { fresh.recover(oldCode) }
        assertTrue(fresh.recover(newCode) is SyncReport.Restored)
        assertEquals("P-2", fresh.value("passport"))
    }
}
