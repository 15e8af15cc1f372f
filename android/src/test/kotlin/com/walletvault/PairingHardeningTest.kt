package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import java.io.File
import java.nio.file.Files
import java.util.Locale
import javax.crypto.spec.SecretKeySpec

/** Issue 26, the Kotlin side of points 2, 3, 10 and 12: pairing and revocation a lying server cannot beat. */
class PairingHardeningTest {
    private val server = FakeServer()
    private val clock = FakeClock()

    inner class Device(val label: String) {
        val directory: File = Files.createTempDirectory("wv26-$label").toFile()
        val atRest = SecretKeySpec(Crypto.randomBytes(32), "AES")
        val keys = TestDeviceKeys()
        val tokens = SessionTokenProvider("http://fake", { "oidc-ok" }, server, clock)
        fun store() = LocalVaultStore(directory, atRest)
        fun engine() = VaultSyncEngine(store(), BackupClient("http://fake", tokens, server, clock), keys, label, clock = clock)
        var engine = engine()
        fun restart() { engine = engine() }
        fun sync() = runSuspending { engine.sync() }
        fun set(id: String, value: String) { clock.now += 1000; engine.edit { d, now -> d.set(id, Json.str(value), now) } }
        fun value(id: String) = engine.document()?.liveValues?.get(id)?.string
        fun file(name: String) = File(directory, name)
    }

    private fun expectSync(code: SyncException.Code, block: () -> Unit): SyncException {
        try { block() } catch (e: SyncException) { assertEquals(code, e.code, e.message); return e }
        fail<Unit>("expected $code")
        throw AssertionError()
    }

    private fun wrongCode(code: String) = String.format(Locale.ROOT, "%06d", (code.replace(" ", "").toInt() + 1) % 1_000_000)

    /** A creates (with a recovery code) and pushes; B asks to pair and A approves: A's report, B's request. */
    private fun approved(a: Device, b: Device, recovery: RecoveryCode? = null): Pair<SyncReport.Approved, PairingRequest> {
        runSuspending { a.engine.createVault(if (recovery == null) emptyList() else listOf(Recipient(RecoveryCodeKek(recovery), "Recovery code"))) }
        a.set("passport", "P-1")
        a.sync()
        val request = b.engine.pairingRequest()
        return Pair(runSuspending { a.engine.approve(PairingRequest.parse(request.encoded)) }, request)
    }

    private fun hmacCode(mac: ByteArray): String {
        var number = 0L
        for (i in 0 until 4) number = (number shl 8) or (mac[i].toLong() and 0xFF)
        val digits = String.format(Locale.ROOT, "%06d", number % 1_000_000)
        return digits.substring(0, 3) + " " + digits.substring(3)
    }

    // MARK: point 2, the comparison value

    @Test
    fun thePairingComparisonValueIsTwentyDigitsOfASha256OfTheKey() {
        val request = PairingRequest(PublicJwk.P256(ByteArray(32) { it.toByte() }, ByteArray(32) { (32 + it).toByte() }), "x")
        assertEquals("0604 0512 8232 3547 2833", request.shortAuthenticationString)
        // FORMAT.md §11.4's vector: the key of ecdh-es+a256kw.key.json.
        val vector = (FormatVectorTest.description("ecdh-es+a256kw")["key"] as JsonValue.Obj)
        val key = PublicJwk.P256(FormatVectorTest.bytes(vector, "x"), FormatVectorTest.bytes(vector, "y"))
        assertEquals("1529 4231 0195 2636 4545", PairingRequest(key, "z").shortAuthenticationString)
        // The top bit set (an unsigned 64-bit integer) and a leading zero both come out as 20 digits.
        for (i in 0 until 200) {
            val key = DeviceKek.generate().publicKey
            val value = PairingRequest(key, "y").shortAuthenticationString
            assertTrue(Regex("\\d{4} \\d{4} \\d{4} \\d{4} \\d{4}").matches(value), value)
            val digest = Crypto.sha256(Crypto.utf8("WalletVault-v2 pairing comparison") + byteArrayOf(0) + key.x + key.y)
            assertEquals(java.math.BigInteger(1, digest.copyOf(8)).toString(), value.replace(" ", "").trimStart('0').ifEmpty { "0" })
        }
    }

    // MARK: point 3, the confirmation code

    /** The code A shows is the v2 code: over the exact bytes A saved and the kek_id of B's entry in them. */
    @Test
    fun theApproversCodeCoversTheSavedBlobAndTheNewDevicesEntry() {
        val a = Device("A")
        val b = Device("B")
        val (report, request) = approved(a, b)
        val blob = server.current!!.blob
        val state = runSuspending { VaultOpener(InMemoryCounterStore()).open(blob, "x", listOf(a.keys.kek!!)) }.state
        val kekId = PublicKeyRecipient(request.publicKey).kekId
        assertTrue(state.entries.any { it.kekId == kekId })
        val message = Crypto.concat(Crypto.utf8("WalletVault-v1 pairing confirmation v2"), byteArrayOf(0), state.envelope.vaultIdentifier!!,
            Forger.u64be(state.envelope.epoch!!), Crypto.u32be(Crypto.utf8(kekId).size), Crypto.utf8(kekId), Crypto.sha256(blob))
        assertEquals(hmacCode(Crypto.hmac(state.exportVaultSecrets().last(), message)), report.confirmationCode)
        assertEquals(report.confirmationCode, runSuspending { a.engine.confirmationCode(request) })
    }

    /** The code confirms the blob A saved and no other: a later version of the same epoch needs A's code for it. */
    @Test
    fun theCodeOfOneBlobDoesNotConfirmAnother() {
        val a = Device("A")
        val b = Device("B")
        val (report, request) = approved(a, b)
        a.set("visa", "V-1")
        a.sync()
        expectSync(SyncException.Code.CONFIRMATION_MISMATCH) { runSuspending { b.engine.confirmPairing(report.confirmationCode) } }
        assertEquals(null, b.engine.anchor())
        val again = runSuspending { a.engine.confirmationCode(request) }
        assertNotEquals(report.confirmationCode, again)
        assertTrue(runSuspending { b.engine.confirmPairing(again) } is SyncReport.Restored)
        assertEquals("V-1", b.value("visa"))
    }

    @Test
    fun theConfirmationCodeVector() {
        assertEquals("093 043", VaultSecrets.confirmationCode(ByteArray(32) { 0x11 }, ByteArray(16) { it.toByte() }, 3, "kid-example",
            Crypto.utf8("{\"v\":1}")))
    }

    /** Any key kind confirms (point 4): here a reader through an RSA-OAEP-256 entry, with the code over its kek_id. */
    @Test
    fun aPublicKeyEntryOfAnyKindConfirmsWithItsKekId() {
        val owner = StoredKeyKek.generate()
        val rsa = RsaKek.generate()
        val created = runSuspending {
            VaultSealer(InMemoryCounterStore()).create(TestSupport.plaintext, "v", listOf(Recipient(owner, "Owner"), Recipient(rsa.recipient, "RSA")))
        }
        val store = InMemoryCounterStore()
        val opener = VaultOpener(store)
        TestSupport.expectThrows<VaultException.UnconfirmedVault> { runSuspending { opener.open(created.blob, "v", listOf(rsa)) } }
        val opened = runSuspending { opener.openUnconfirmed(created.blob, "v", listOf(rsa)) }
        assertEquals(rsa.kekId, opened.kekId)
        TestSupport.expectThrows<VaultException.PairingMismatch> {
            opener.confirmPairing(opened, "v", created.state.confirmationCode(owner.kekId, created.blob)!!)
        }
        assertEquals(null, store.anchor("v"))
        opener.confirmPairing(opened, "v", created.state.confirmationCode(rsa.kekId, created.blob)!!)
        assertEquals(created.state.anchor, store.anchor("v"))
    }

    /** A malformed code is not a guess: INVALID_INPUT, and it does not count. */
    @Test
    fun aCodeThatIsNotSixDigitsIsNotCounted() {
        val a = Device("A")
        val b = Device("B")
        val (report, _) = approved(a, b)
        repeat(5) { expectSync(SyncException.Code.INVALID_INPUT) { runSuspending { b.engine.confirmPairing("12345") } } }
        assertFalse(b.file("pairing-attempts.sealed").exists())
        assertTrue(runSuspending { b.engine.confirmPairing(report.confirmationCode) } is SyncReport.Restored)
    }

    /** Three wrong codes per pairing, counted across restarts; then the pairing key is gone and pairing starts again. */
    @Test
    fun threeWrongCodesEndThePairingEvenAcrossRestarts() {
        val a = Device("A")
        val b = Device("B")
        val (report, request) = approved(a, b)
        val wrong = wrongCode(report.confirmationCode)
        for (attempt in 1..3) {
            val e = expectSync(SyncException.Code.CONFIRMATION_MISMATCH) { runSuspending { b.engine.confirmPairing(wrong) } }
            assertTrue(e.message!!.contains("revoke"), e.message)
            assertEquals(attempt == 3, e.message!!.contains("start again"), e.message)
            assertEquals(null, b.engine.anchor())
            assertEquals(null, b.engine.document())
            b.restart()
        }
        // The right code no longer helps: the key the approver wrapped to was discarded.
        try {
            runSuspending { b.engine.confirmPairing(report.confirmationCode) }
            fail<Unit>("the pairing survived three wrong codes")
        } catch (e: SyncException) {
            assertNotEquals(SyncException.Code.CONFIRMATION_MISMATCH, e.code, e.message)
        }
        assertEquals(null, b.engine.anchor())
        val fresh = b.engine.pairingRequest()
        assertNotEquals(request.publicKey, fresh.publicKey)
        // A new pairing has its own three tries and pairs with its own code.
        val second = runSuspending { a.engine.approve(PairingRequest.parse(fresh.encoded)) }
        expectSync(SyncException.Code.CONFIRMATION_MISMATCH) { runSuspending { b.engine.confirmPairing(wrongCode(second.confirmationCode)) } }
        assertTrue(runSuspending { b.engine.confirmPairing(second.confirmationCode) } is SyncReport.Restored)
        assertEquals("P-1", b.value("passport"))
    }

    @Test
    fun aCorrectCodeResetsTheCount() {
        val a = Device("A")
        val b = Device("B")
        val (report, _) = approved(a, b)
        val wrong = wrongCode(report.confirmationCode)
        repeat(2) { expectSync(SyncException.Code.CONFIRMATION_MISMATCH) { runSuspending { b.engine.confirmPairing(wrong) } } }
        assertTrue(runSuspending { b.engine.confirmPairing(report.confirmationCode) } is SyncReport.Restored)
        assertFalse(b.directory.listFiles()!!.any { it.name.startsWith("pairing") }, b.directory.listFiles()!!.map { it.name }.toString())
    }

    // MARK: point 10, the sealed anti-rollback state

    private val stateFiles = listOf("state.sealed", "state-generation.sealed", "counters.sealed", "anchors.sealed")

    private class Local(store: LocalVaultStore) {
        val blob = store.syncedBlob()!!.toList()
        val version = store.record().syncedVersion
        val working = store.workingCopy()
    }

    private fun assertUnchanged(before: Local, store: LocalVaultStore) {
        val after = Local(store)
        assertEquals(before.blob, after.blob)
        assertEquals(before.version, after.version)
        assertEquals(before.working, after.working)
    }

    @Test
    fun aSyncedProfileWhoseAntiRollbackStateIsGoneRefusesToSync() {
        val a = Device("A")
        val b = Device("B")
        val recovery = RecoveryCode.generate()
        val (report, _) = approved(a, b, recovery)
        assertTrue(runSuspending { b.engine.confirmPairing(report.confirmationCode) } is SyncReport.Restored)
        a.sync()
        for (name in stateFiles) a.file(name).delete()
        val before = Local(a.store())
        val e = expectSync(SyncException.Code.CONFIRMATION_REQUIRED) { a.sync() }
        assertTrue(e.message!!.contains("anti-rollback state is missing"), e.message)
        // Also after a restart, and with something new on the server.
        b.set("visa", "V-B")
        b.sync()
        a.restart()
        expectSync(SyncException.Code.CONFIRMATION_REQUIRED) { a.sync() }
        assertUnchanged(before, a.store())
        assertFalse(stateFiles.any { a.file(it).exists() }, "a fresh state was written")
        // Recovering re-establishes it (the recovery code authenticates the vault).
        assertTrue(runSuspending { a.engine.recover(RecoveryCodeKek(RecoveryCode.parse(recovery.formatted))) } is SyncReport.Restored)
        assertEquals("V-B", a.value("visa"))
        assertTrue(a.sync() is SyncReport.UpToDate)
    }

    /** B confirmed its pairing, then lost its anti-rollback state, and A approved B's new request: A's report. */
    private fun approvedAgainAfterTheStateIsGone(a: Device, b: Device): SyncReport.Approved {
        val (report, _) = approved(a, b)
        assertTrue(runSuspending { b.engine.confirmPairing(report.confirmationCode) } is SyncReport.Restored)
        for (name in stateFiles) b.file(name).delete()
        expectSync(SyncException.Code.CONFIRMATION_REQUIRED) { b.sync() }
        return runSuspending { a.engine.approve(PairingRequest.parse(b.engine.pairingRequest().encoded)) }
    }

    /** A member confirming again merges the edits it never pushed (as Swift's `syncNow` does), never overwrites them. */
    @Test
    fun aMemberConfirmingAgainKeepsItsPendingEdits() {
        val a = Device("A")
        val b = Device("B")
        val again = approvedAgainAfterTheStateIsGone(a, b)
        b.set("card", "edited offline")
        val confirmed = runSuspending { b.engine.confirmPairing(again.confirmationCode) }
        assertEquals("edited offline", b.value("card"), "the pending edit is gone from the device")
        assertTrue(confirmed is SyncReport.Merged, "expected a merge, got $confirmed")
        assertFalse(b.engine.status().hasLocalEdits, "the merged save carried the edit")
        assertFalse(b.file("pairing-key.sealed").exists(), "the single-use pairing key stayed")
        a.sync()
        assertEquals("edited offline", a.value("card"), "the edit never reached the other member")
        assertEquals(listOf("A", "B"), a.engine.devices().map { it.label }.sorted(), "the pairing entry stayed in the vault")
    }

    /** A member whose state is gone pairs again: wrong codes never void it (it keeps its key), the right one re-establishes it. */
    @Test
    fun aMemberWhoseStateIsGoneConfirmsAgainAndKeepsItsKey() {
        val a = Device("A")
        val b = Device("B")
        val again = approvedAgainAfterTheStateIsGone(a, b)
        val deviceKek = b.keys.kek!!.kekId
        repeat(4) {
            val e = expectSync(SyncException.Code.CONFIRMATION_MISMATCH) { runSuspending { b.engine.confirmPairing(wrongCode(again.confirmationCode)) } }
            assertFalse(e.message!!.contains("void"), e.message)
        }
        assertTrue(b.file("pairing-key.sealed").exists())
        assertFalse(stateFiles.any { b.file(it).exists() }, "a mismatch wrote a state")
        assertTrue(runSuspending { b.engine.confirmPairing(again.confirmationCode) } is SyncReport.Restored)
        assertEquals(deviceKek, b.keys.kek!!.kekId)
        assertEquals(a.engine.anchor(), b.engine.anchor())
        a.set("visa", "V-A")
        a.sync()
        assertTrue(b.sync() is SyncReport.Restored)
        assertEquals("V-A", b.value("visa"))
    }

    @Test
    fun anOlderCopyOfTheStateFileIsRefused() {
        val a = Device("A")
        val b = Device("B")
        val (report, _) = approved(a, b)
        assertTrue(runSuspending { b.engine.confirmPairing(report.confirmationCode) } is SyncReport.Restored)
        a.sync()
        val old = stateFiles.filter { it != "state-generation.sealed" && a.file(it).exists() }.map { Pair(it, a.file(it).readBytes()) }
        assertTrue(old.isNotEmpty())
        val replayable = server.current!!.blob
        a.set("passport", "P-2")
        a.sync()
        b.sync()
        for ((name, bytes) in old) a.file(name).writeBytes(bytes)
        val before = Local(a.store())
        // The server replays the version the old state accepted last: refused on the state, not taken as new.
        server.replace(replayable)
        val e = expectSync(SyncException.Code.LOCAL_STORAGE) { a.sync() }
        assertTrue(e.message!!.contains("anti-rollback state"), e.message)
        a.restart()
        expectSync(SyncException.Code.LOCAL_STORAGE) { a.sync() }
        assertUnchanged(before, a.store())
        assertEquals("P-2", a.value("passport"))
    }

    /** A profile written before generations (separate counters and anchors files) is read, then moved to the state file. */
    @Test
    fun aProfileFromBeforeGenerationsIsReadAndMoved() {
        val directory = Files.createTempDirectory("wv26-legacy").toFile()
        val key = SecretKeySpec(Crypto.randomBytes(32), "AES")
        val anchor = VaultAnchor(Crypto.randomBytes(16), 2, Crypto.randomBytes(32))
        val old = LocalVaultStore(directory, key)
        old.write("counters", Json.write(Json.obj("vault" to Json.int(7))))
        old.write("anchors", Json.write(Json.obj("vault" to Json.obj("vault_id" to Json.str(anchor.idText), "epoch" to Json.int(2),
            "anchor" to Json.str(Base64Url.encode(anchor.fingerprint))))))
        old.write("synced-blob", Crypto.utf8("{}"))
        val store = LocalVaultStore(directory, key)
        store.checkAntiRollbackState()
        assertEquals(7L, store.counters.highest("vault"))
        assertEquals(anchor, store.anchors.anchor("vault"))
        store.counters.advance("vault", 8)
        assertEquals(listOf("anchors.sealed", "counters.sealed").map { File(directory, it).exists() }, listOf(false, false))
        assertTrue(File(directory, "state.sealed").exists() && File(directory, "state-generation.sealed").exists())
        assertEquals(anchor, LocalVaultStore(directory, key).anchors.anchor("vault"))
        assertEquals(8L, LocalVaultStore(directory, key).counters.highest("vault"))
        directory.deleteRecursively()
    }

    // MARK: point 12, parity with Swift

    /** A seed-form entry authenticates its writer as its key's algorithm does (Swift `KeyWrapAlgorithm.authenticatesWriter`). */
    @Test
    fun aSeedFormEntryAuthenticatesItsWriterAsItsKeysAlgorithmDoes() {
        val aes = Crypto.randomBytes(32)
        val cases = listOf<Pair<KeyEncryptionKey, Boolean>>(
            Pair(StoredKeyKek.generate(), true),
            Pair(AesGcmKek(aes), true),
            Pair(FakeKeystore.kek(SecretKeySpec(Crypto.randomBytes(32), "AES"), KeystoreKek.newKekId(), { c: javax.crypto.Cipher -> c }), true),
            Pair(SelfEcdhKek.generate(), true),
            Pair(RsaKek.generate(), false))
        for ((key, expected) in cases) {
            val dek = Crypto.randomBytes(32)
            val entry = when (key) {
                is KeystoreKek -> runSuspending { key.wrapSeedLayout(dek) }
                is AesGcmKek -> key.wrapSeedLayout(dek)
                else -> runSuspending { key.wrap(dek) }
            }
            val blob = VaultSealer(InMemoryCounterStore()).sealSeedForm(TestSupport.plaintext, dek, listOf(entry))
            val envelope = VaultEnvelope.parse(blob)
            assertTrue(envelope.entries.single().scheme is Scheme.Seed)
            val store = InMemoryCounterStore()
            if (expected) {
                val opened = runSuspending { VaultOpener(store).open(blob, "v", listOf(key)) }
                assertTrue(opened.authenticatedWriter, key.alg)
            } else {
                // A public-key seed entry proves no writer: refused with nothing pinned (§11.3).
                TestSupport.expectThrows<VaultException.UnconfirmedVault> { runSuspending { VaultOpener(store).open(blob, "v", listOf(key)) } }
            }
            // Either way a seed-form blob stores nothing.
            assertEquals(0L, store.highest("v"))
            assertEquals(null, store.anchor("v"))
        }
    }

    /** Neither store moves an anchor back to an older epoch of the same vault. */
    @Test
    fun noStoreMovesAnAnchorBack() {
        val id = Crypto.randomBytes(16)
        val newer = VaultAnchor(id, 3, Crypto.randomBytes(32))
        val older = VaultAnchor(id, 2, Crypto.randomBytes(32))
        val memory = InMemoryCounterStore()
        val directory = Files.createTempDirectory("wv26-anchor").toFile()
        val local = LocalVaultStore(directory, SecretKeySpec(Crypto.randomBytes(32), "AES")).anchors
        for (store in listOf<AnchorStore>(memory, local)) {
            store.pin("v", newer)
            store.pin("v", older)
            assertEquals(newer, store.anchor("v"))
        }
        directory.deleteRecursively()
    }
}
