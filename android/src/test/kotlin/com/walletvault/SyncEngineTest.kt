package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import java.io.File
import java.nio.file.Files
import javax.crypto.spec.SecretKeySpec

class SyncEngineTest {
    private var server = FakeServer()
    private val clock = FakeClock()

    inner class Device(val label: String, var resolution: ConflictResolution? = null) {
        val directory: File = Files.createTempDirectory("wv-$label").toFile()
        val atRest = SecretKeySpec(Crypto.randomBytes(32), "AES")
        val keys = TestDeviceKeys()
        var conflicts = ArrayList<List<String>>()
        val tokens = SessionTokenProvider("http://fake", { "oidc-ok" }, server, clock)
        private suspend fun decide(context: ConflictContext): ConflictResolution {
            conflicts.add(context.conflictingItems)
            return resolution!!
        }
        fun engine() = VaultSyncEngine(LocalVaultStore(directory, atRest), BackupClient("http://fake", tokens, server, clock), keys, label,
            conflictHandler = if (resolution == null) null else this::decide, clock = clock)
        val engine = engine()
        fun sync() = runSuspending { engine.sync() }
        fun set(id: String, value: String) { clock.now += 1000; engine.edit { d, now -> d.set(id, Json.str(value), now) } }
        fun value(id: String) = engine.document()?.liveValues?.get(id)?.string
    }

    private fun expectSync(code: SyncException.Code, block: () -> Unit): SyncException {
        try { block() } catch (e: SyncException) { assertEquals(code, e.code, e.message); return e }
        fail<Unit>("expected $code")
        throw AssertionError()
    }

    /** A creates with a recovery code; B pairs through the six-digit-code flow and restores silently. */
    private fun pairedDevices(resolutionB: ConflictResolution? = null): Triple<Device, Device, RecoveryCode> {
        val a = Device("A")
        val b = Device("B", resolutionB)
        val code = RecoveryCode.generate()
        assertTrue(runSuspending { a.engine.createVault(listOf(Recipient(RecoveryCodeKek(code), "Recovery code"))) } is SyncReport.Created)
        a.set("passport", "P-1")
        assertTrue(a.sync() is SyncReport.Pushed)
        val request = b.engine.pairingRequest()
        val received = PairingRequest.parse(request.encoded)
        assertEquals(request.shortAuthenticationString, received.shortAuthenticationString)
        assertTrue(Regex("\\d{4}( \\d{4}){4}").matches(received.shortAuthenticationString))
        val approved = runSuspending { a.engine.approve(received) }
        assertTrue(Regex("\\d{3} \\d{3}").matches(approved.confirmationCode), approved.confirmationCode)
        // FORMAT.md §11.4: B reads through a public-key entry, so it must confirm the vault with A's code first.
        expectSync(SyncException.Code.CONFIRMATION_REQUIRED) { b.sync() }
        assertEquals(null, b.engine.anchor())
        assertTrue(runSuspending { b.engine.confirmPairing(approved.confirmationCode) } is SyncReport.Restored)
        assertEquals(a.engine.anchor(), b.engine.anchor())
        assertEquals("P-1", b.value("passport"))
        // B's own Keystore entry replaced the single-use pairing entry.
        val entries = b.engine.devices()
        assertEquals(listOf("A256GCMKW", "A256GCMKW", "A256KW"), entries.map { it.alg }.sorted())
        assertEquals(b.keys.kek!!.kekId, entries.single { it.isThisDevice }.kekId)
        assertTrue(a.sync() is SyncReport.Restored)
        return Triple(a, b, code)
    }

    @Test
    fun pairingAndMergingEditsToDifferentItems() {
        val (a, b) = pairedDevices()
        a.set("licence", "L-A")
        b.set("loyalty", "C-B")
        assertTrue(a.sync() is SyncReport.Pushed)
        val merged = b.sync()
        assertTrue(merged is SyncReport.Merged && merged.conflicts.isEmpty(), merged.toString())
        assertTrue(a.sync() is SyncReport.Restored)
        for (d in listOf(a, b)) {
            assertEquals("L-A", d.value("licence"))
            assertEquals("C-B", d.value("loyalty"))
        }
        // A deletion travels as a tombstone.
        clock.now += 1000
        a.engine.edit { d, now -> d.delete("licence", now) }
        a.sync()
        b.sync()
        assertEquals(null, b.value("licence"))
        assertTrue(b.engine.document()!!.items["licence"]!!.isDeleted)
        val health = a.engine.keyHealth()
        assertEquals(2, health.deviceKeys)
        assertEquals(1, health.recoveryPaths)
        assertEquals(null, health.warning)
    }

    @Test
    fun sameItemConflictReachesTheCallbackAndNothingIsOverwritten() {
        for (resolution in ConflictResolution.values()) {
            server = FakeServer()
            val (a, b) = pairedDevices(resolution)
            a.set("passport", "from A")
            b.set("passport", "from B")
            a.sync()
            val report = b.sync()
            assertEquals(listOf(listOf("passport")), b.conflicts, resolution.name)
            val expected = when (resolution) { ConflictResolution.KEEP_CLOUD -> "from A"; else -> "from B" }
            assertEquals(expected, b.value("passport"), resolution.name)
            a.sync()
            assertEquals(expected, a.value("passport"), resolution.name)
            assertTrue(report is SyncReport.Merged || report is SyncReport.Restored)
        }
        // Without a callback the conflict is an error and the local edit stays.
        server = FakeServer()
        val (a, b) = pairedDevices(null)
        a.set("passport", "from A")
        b.set("passport", "from B")
        a.sync()
        expectSync(SyncException.Code.UNRESOLVED_CONFLICT) { b.sync() }
        assertEquals("from B", b.value("passport"))
        assertTrue(b.engine.status().hasLocalEdits)
    }

    @Test
    fun anEditMadeDuringASyncIsNeverLost() {
        val (a, b) = pairedDevices()
        // While B's push is on the wire, the user edits another item and the same item again.
        b.set("passport", "P-2")
        server.beforeSaveStored = {
            server.beforeSaveStored = null
            b.set("ticket", "T-during")
            b.set("passport", "P-3")
        }
        assertTrue(b.sync() is SyncReport.Pushed)
        assertEquals("T-during", b.value("ticket"))
        assertEquals("P-3", b.value("passport"))
        assertTrue(b.engine.status().hasLocalEdits, "the edits made meanwhile are still to be pushed")
        b.sync()
        a.sync()
        assertEquals("T-during", a.value("ticket"))
        assertEquals("P-3", a.value("passport"))
        // The same while a restore writes back.
        a.set("visa", "V-A")
        a.sync()
        server.beforeSaveStored = null
        var engine: VaultSyncEngine? = null
        val loadHook = object : HttpTransport {
            override suspend fun send(request: HttpRequest): HttpResponse {
                val response = server.send(request)
                if (request.url.contains("action=load") && response.status == 200) {
                    clock.now += 1000
                    engine!!.edit { d, now -> d.set("note", Json.str("N-during-restore"), now) }
                }
                return response
            }
        }
        val b2 = VaultSyncEngine(LocalVaultStore(b.directory, b.atRest), BackupClient("http://fake", b.tokens, loadHook, clock), b.keys, "B", clock = clock)
        engine = b2
        runSuspending { b2.sync() }
        assertEquals("V-A", b2.document()!!.liveValues["visa"]!!.string)
        assertEquals("N-during-restore", b2.document()!!.liveValues["note"]!!.string)
        assertTrue(b2.status().hasLocalEdits)
    }

    /** A clock that runs [hook] once, at its next reading, before it answers. */
    private class HookedClock(private val inner: FakeClock) : WalletClock {
        @Volatile var hook: (() -> Unit)? = null
        override fun nowMillis(): Long {
            val run = hook
            hook = null
            run?.invoke()
            return inner.nowMillis()
        }
        override suspend fun sleep(millis: Long) = inner.sleep(millis)
    }

    @Test
    fun anEditMadeAsARestoringSyncBeginsIsNeverLost() {
        // The phone has nothing pending and the tablet saved since, so the phone's sync restores. The user's edit lands
        // as the round reads its clock, which the round before this fix did after reading the sync record and before
        // taking its snapshot: the record said "no edits", the snapshot held the edit, and the restore overwrote it.
        val keys = TestDeviceKeys()
        val phoneClock = HookedClock(clock)
        fun store(label: String) = LocalVaultStore(Files.createTempDirectory("wv-$label").toFile(), SecretKeySpec(Crypto.randomBytes(32), "AES"))
        fun engine(store: LocalVaultStore, label: String, engineClock: WalletClock) = VaultSyncEngine(store,
            BackupClient("http://fake", SessionTokenProvider("http://fake", { "oidc-ok" }, server, clock), server, clock), keys, label,
            clock = engineClock)
        val phoneStore = store("phone")
        val phone = engine(phoneStore, "phone", phoneClock)
        val tablet = engine(store("tablet"), "tablet", clock)
        runSuspending { phone.createVault() }
        runSuspending { tablet.sync() }
        tablet.edit { d, now -> d.set("a", Json.str("from the tablet"), now) }
        assertTrue(runSuspending { tablet.sync() } is SyncReport.Pushed)
        // A rate limit that has passed: the round reads the clock to see that it has.
        val record = phone.status()
        assertFalse(record.hasLocalEdits)
        phoneStore.save(LocalVaultStore.Record(record.syncedVersion, false, 1L))
        phoneClock.hook = { phone.edit { d, now -> d.set("b", Json.str("edited on the phone"), now) } }
        runSuspending { phone.sync() }
        assertEquals(null, phoneClock.hook, "the edit was made during the sync")
        assertEquals("edited on the phone", phone.document()!!.liveValues["b"]?.string)
        assertEquals("from the tablet", phone.document()!!.liveValues["a"]?.string)
        assertTrue(phone.status().hasLocalEdits, "the edit is still to be pushed")
        assertTrue(runSuspending { phone.sync() } is SyncReport.Pushed)
        runSuspending { tablet.sync() }
        assertEquals("edited on the phone", tablet.document()!!.liveValues["b"]?.string)
    }

    /**
     * A member whose sync before the erasure fails (a conflict with no handler) is told why, and nothing is erased
     * (Swift's aMemberWhoseSyncBeforeTheErasureFailsIsToldWhyAndNothingIsErased). Before, the failure was dropped and
     * the erasure's 403 reached the member as REMOVED_FROM_VAULT.
     */
    @Test
    fun aMemberWhoseSyncBeforeTheErasureFailsIsToldWhyAndNothingIsErased() {
        val (a, b) = pairedDevices()
        a.set("passport", "from A")
        a.sync()
        b.set("passport", "from B")
        expectSync(SyncException.Code.UNRESOLVED_CONFLICT) { runSuspending { b.engine.eraseAccount() } }
        assertNotNull(server.current, "the vault was erased")
        assertEquals("from B", b.value("passport"))
    }

    @Test
    fun concurrentSyncsAreSerialised() {
        val (a, _) = pairedDevices()
        a.set("x", "1")
        val pool = java.util.concurrent.Executors.newFixedThreadPool(4)
        val results = (1..4).map { pool.submit<SyncReport> { a.sync() } }.map { it.get() }
        pool.shutdown()
        assertEquals(1, results.count { it is SyncReport.Pushed }, results.toString())
        assertEquals(3, results.count { it is SyncReport.UpToDate })
    }

    @Test
    fun rollbackAndTamperingAreDetectedAndLocalStateIsUnchanged() {
        val (a, b) = pairedDevices()
        val old = server.current!!.blob
        b.set("passport", "P-2")
        b.sync()
        a.sync()
        assertEquals("P-2", a.value("passport"))
        // The server replays the older version: refused, nothing local changes, also for a restarted engine.
        server.replace(old)
        val before = a.engine.document()
        val store = LocalVaultStore(a.directory, a.atRest)
        val recordBefore = store.record().syncedVersion
        val blobBefore = store.syncedBlob()!!
        expectSync(SyncException.Code.ROLLBACK_DETECTED) { a.sync() }
        assertEquals(before, a.engine.document())
        val restarted = a.engine()
        expectSync(SyncException.Code.ROLLBACK_DETECTED) { runSuspending { restarted.sync() } }
        // A hint edited by the server.
        server.replace(TestSupport.edit(server.versions[server.versions.size - 2].blob) { it["hint"] = Json.str("evil") })
        expectSync(SyncException.Code.TAMPERED) { a.sync() }
        assertEquals(before, a.engine.document())
        // Garbage.
        server.replace(Crypto.utf8("{\"v\":1,\"v\":1}"))
        expectSync(SyncException.Code.TAMPERED) { a.sync() }
        assertEquals(before, a.engine.document())
        assertEquals(recordBefore, store.record().syncedVersion)
        TestSupport.assertBytes(blobBefore, store.syncedBlob()!!)
        assertEquals(VaultEnvelope.parse(blobBefore).counter, store.counters.highest(VaultSyncEngine.VAULT_ID))
    }

    @Test
    fun aWrongConfirmationCodeStoresNothingAndTheRightOneThenPairs() {
        val a = Device("A")
        val b = Device("B")
        runSuspending { a.engine.createVault() }
        a.set("passport", "P-1")
        a.sync()
        val request = b.engine.pairingRequest()
        val approved = runSuspending { a.engine.approve(PairingRequest.parse(request.encoded)) }
        expectSync(SyncException.Code.CONFIRMATION_REQUIRED) { b.sync() }
        val files = { b.directory.listFiles()!!.map { it.name }.filter { !it.startsWith(".") }.sorted() }
        val before = files()
        val wrong = String.format(java.util.Locale.ROOT, "%06d", (approved.confirmationCode.replace(" ", "").toInt() + 1) % 1_000_000)
        expectSync(SyncException.Code.CONFIRMATION_MISMATCH) { runSuspending { b.engine.confirmPairing(wrong) } }
        // Nothing stored but the count of wrong codes (FORMAT.md §11.4: three per pairing).
        assertEquals(before, files().filter { it != "pairing-attempts.sealed" }, "nothing stored")
        assertTrue(files().contains("pairing-attempts.sealed"))
        assertFalse(files().any { it.startsWith("state") || it == "synced-blob.sealed" }, files().toString())
        assertEquals(null, b.engine.anchor())
        assertEquals(null, b.engine.document())
        // The code as the user might type it.
        assertTrue(runSuspending { b.engine.confirmPairing(" " + approved.confirmationCode.replace(" ", "") + " ") } is SyncReport.Restored)
        assertEquals("P-1", b.value("passport"))
        assertEquals(a.engine.anchor(), b.engine.anchor())
        assertTrue(b.sync() is SyncReport.UpToDate)
    }

    @Test
    fun aServerForgedBlobForTheNewDevicesPairingKeyIsNeverAccepted() {
        // Attack 1 at the engine's level: between the approval and the confirmation the server swaps in a blob of
        // its own for the new device's pairing key (public: it is in the approved entry), with the highest counter.
        val a = Device("A")
        val b = Device("B")
        runSuspending { a.engine.createVault() }
        a.sync()
        val request = b.engine.pairingRequest()
        val approved = runSuspending { a.engine.approve(PairingRequest.parse(request.encoded)) }
        val genuine = server.current!!.blob
        val id = VaultEnvelope.parse(genuine).vaultIdentifier!!
        for (forged in listOf(
            Forger.fromPublicKey(request.publicKey, Forger.MAX_COUNTER, Forger.Anchor(id, 1, listOf(Crypto.randomBytes(32)))),
            Forger.fromPublicKey(request.publicKey, Forger.MAX_COUNTER, null))) {
            server.replace(forged)
            val store = LocalVaultStore(b.directory, b.atRest)
            expectSync(SyncException.Code.CONFIRMATION_REQUIRED) { b.sync() }
            // The anchored forgery has the forger's secret, so the approver's code does not match it; the pre-anchor
            // one has no secret to confirm (the engine takes nothing it read through a public-key entry unconfirmed).
            expectSync(if (VaultEnvelope.parse(forged).isAnchored) SyncException.Code.CONFIRMATION_MISMATCH else SyncException.Code.CONFIRMATION_REQUIRED) {
                runSuspending { b.engine.confirmPairing(approved.confirmationCode) }
            }
            assertEquals(null, b.engine.document())
            assertEquals(0L, store.counters.highest(VaultSyncEngine.VAULT_ID), "a forged counter reached the store")
            assertEquals(null, store.anchors.anchor(VaultSyncEngine.VAULT_ID))
        }
        // The genuine blob is served again: B confirms and pairs.
        server.replace(genuine)
        assertTrue(runSuspending { b.engine.confirmPairing(approved.confirmationCode) } is SyncReport.Restored)
        assertEquals(a.engine.anchor(), b.engine.anchor())
    }

    @Test
    fun anotherVaultOfThisKeyAndAPreAnchorVersionAreRefusedAndNothingLocalChanges() {
        val (a, _) = pairedDevices()
        a.set("passport", "P-2")
        a.sync()
        val store = LocalVaultStore(a.directory, a.atRest)
        val before = Triple(store.syncedBlob()!!.toList(), store.counters.highest(VaultSyncEngine.VAULT_ID), store.anchors.anchor(VaultSyncEngine.VAULT_ID))
        val document = a.engine.document()
        val genuine = server.current!!.blob
        // Attack 2: another vault (another account of the same user) in which this device's key also has an entry.
        val other = runSuspending { VaultSealer(InMemoryCounterStore()).create(Crypto.utf8("{\"items\":{}}"), "x", listOf(Recipient(a.keys.kek!!, "A"))) }
        server.replace(other.blob)
        val wrong = expectSync(SyncException.Code.TAMPERED) { a.sync() }
        assertEquals("wrongVault", (wrong.cause as VaultException).code)
        // Attack 4: a pre-anchor version for this device's own entry with a counter far above.
        server.replace(Forger.withKey(a.keys.kek!!, 1000, null))
        val downgrade = expectSync(SyncException.Code.ROLLBACK_DETECTED) { a.sync() }
        assertEquals("downgrade", (downgrade.cause as VaultException).code)
        val after = Triple(store.syncedBlob()!!.toList(), store.counters.highest(VaultSyncEngine.VAULT_ID), store.anchors.anchor(VaultSyncEngine.VAULT_ID))
        assertEquals(before, after)
        assertEquals(document, a.engine.document())
        server.replace(genuine)
        val report = a.sync()
        assertTrue(report is SyncReport.Restored, report.toString())
        assertEquals("P-2", a.value("passport"))
    }

    @Test
    fun passphraseRecovery() {
        val a = Device("A")
        runSuspending { a.engine.createVault(listOf(Recipient(PassphraseKek.create("a long passphrase", Argon2Costs.FLOOR), "Passphrase"))) }
        a.set("passport", "P-1")
        a.sync()
        a.keys.key!!.invalidate()
        expectSync(SyncException.Code.NO_ACCESS) { runSuspending { a.engine.recover("wrong passphrase") } }
        assertTrue(runSuspending { a.engine.recover("a long passphrase") } is SyncReport.Restored)
        assertEquals("P-1", a.value("passport"))
        assertEquals(2, a.engine.devices().size)
    }

    @Test
    fun invalidatedKeyRecoversWithTheRecoveryCode() {
        val (a, b, code) = pairedDevices()
        val deadKekId = b.keys.kek!!.kekId
        b.keys.key!!.invalidate()
        a.set("passport", "P-2")
        a.sync()
        expectSync(SyncException.Code.KEY_INVALIDATED) { b.sync() }
        b.set("offline", "edited while the key was dead")
        assertTrue(runSuspending { b.engine.recover(RecoveryCodeKek(RecoveryCode.parse(code.formatted))) } is SyncReport.Restored)
        assertEquals("P-2", b.value("passport"))
        assertEquals("edited while the key was dead", b.value("offline"), "local edits are merged in, not dropped")
        a.sync()
        assertEquals("edited while the key was dead", a.value("offline"))
        val entries = b.engine.devices()
        assertFalse(entries.any { it.kekId == deadKekId }, "the dead entry was removed")
        assertTrue(entries.any { it.isThisDevice })
        b.set("after", "recovery")
        b.sync()
        a.sync()
        assertEquals("recovery", a.value("after"))
    }

    @Test
    fun revocationRotatesTheDekAndLocksTheDeviceOut() {
        val (a, b) = pairedDevices()
        val report = runSuspending { a.engine.revoke(b.keys.kek!!.kekId) }
        assertTrue(report is SyncReport.Rotated)
        // The recovery-code entry needs its code to be re-wrapped: reported, as the CLI does.
        assertEquals(listOf("Recovery code"), (report as SyncReport.Rotated).skipped.map { it.label })
        val envelope = VaultEnvelope.parse(server.current!!.blob)
        assertEquals(1L, envelope.dekSeals)
        // FORMAT.md §11.5: the vault secret rotated with the DEK; A pinned the new epoch once the server accepted it.
        assertEquals(2L, envelope.epoch)
        assertEquals(2L, a.engine.anchor()!!.epoch)
        assertEquals(1L, b.engine.anchor()!!.epoch)
        val refused = expectSync(SyncException.Code.REMOVED_FROM_VAULT) { b.sync() }
        assertTrue(refused.message!!.contains("removed from the vault by \"A\""), refused.message)
    }

    @Test
    fun anOlderVersionCanBeRestored() {
        val (a, b) = pairedDevices()
        val versions = runSuspending { BackupClient("http://fake", a.tokens, server, clock).versions() }
        a.set("passport", "P-2")
        a.sync()
        val wanted = server.versions.last { VaultEnvelope.parse(it.blob).entries.size == 3 && it.syncId in versions.map { v -> v.syncId } }.syncId
        assertEquals(wanted, runSuspending { a.engine.restoreVersion(wanted) }.restoredFrom)
        assertEquals("P-1", a.value("passport"))
        b.sync()
        assertEquals("P-1", b.value("passport"))
    }

    @Test
    fun rateLimitedSavesKeepTheEditsLocally() {
        val (a, _) = pairedDevices()
        a.set("passport", "P-2")
        server.rateLimitSaves = true
        val report = a.sync()
        assertTrue(report is SyncReport.RateLimited)
        assertEquals(clock.now + 120_000, (report as SyncReport.RateLimited).nextAttemptAt)
        assertTrue(a.engine.status().hasLocalEdits)
        assertTrue(a.sync() is SyncReport.RateLimited, "no request before the Retry-After time")
        server.rateLimitSaves = false
        clock.now += 121_000
        assertTrue(a.sync() is SyncReport.Pushed)
    }

    @Test
    fun tooLargeIsRefusedLocally() {
        val (a, _) = pairedDevices()
        a.set("photo", "x".repeat(900_000))
        expectSync(SyncException.Code.TOO_LARGE) { a.sync() }
        assertTrue(a.engine.status().hasLocalEdits)
    }

    @Test
    fun localStateIsEncryptedAtRest() {
        val (a, _) = pairedDevices()
        a.set("secret-item", "very secret value")
        for (file in a.directory.listFiles()!!) {
            val text = String(file.readBytes(), Charsets.ISO_8859_1)
            assertFalse(text.contains("very secret") || text.contains("secret-item") || text.contains("wrappedDeks"), file.name)
        }
        assertNotNull(LocalVaultStore(a.directory, a.atRest).workingCopy())
        // Under another key nothing opens: the copy is cleared as state sealed elsewhere (issue 27 point 4).
        val copy = Files.createTempDirectory("wv-copy").toFile()
        a.directory.copyRecursively(copy, overwrite = true)
        val wrong = LocalVaultStore(copy, SecretKeySpec(Crypto.randomBytes(32), "AES"))
        assertTrue(wrong.clearedStateSealedElsewhere)
        assertEquals(null, wrong.workingCopy())
        assertEquals(null, wrong.syncedBlob())
    }
}
