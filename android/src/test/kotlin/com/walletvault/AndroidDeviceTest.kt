package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import java.io.File
import java.nio.file.Files
import javax.crypto.spec.SecretKeySpec

/**
 * Issue 27 points 4, 7 and 8 with Kotlin "Android" devices ([KeystoreDeviceKeys] over [FakeKeystore]) beside
 * software members ([SoftwareDeviceKeys], as the JVM and a Swift key file): a restore is a new device, a revoke by
 * another member keeps every remaining device, and a device whose key died pairs again.
 */
class AndroidDeviceTest {
    private val server = FakeServer()
    private val clock = FakeClock()

    /** A device: an Android phone when [sdk] is given, else a software member. */
    inner class Device(val label: String, val sdk: Int? = null, val directory: File = Files.createTempDirectory("wv-and-$label").toFile(),
                       val keystore: FakeKeystore = FakeKeystore(sdk ?: 33, strongBox = true)) {
        val prompt = FakePrompt()
        val store = LocalVaultStore(directory, SecretKeySpec(Crypto.randomBytes(32), "AES"))
        val keys: DeviceKeyStore = if (sdk == null) SoftwareDeviceKeys(store) else KeystoreDeviceKeys(keystore, prompt, store)
        val engine = VaultSyncEngine(store, BackupClient("http://fake", SessionTokenProvider("http://fake", { "oidc-ok" }, server, clock), server, clock),
            keys, label, clock = clock)
        fun sync() = runSuspending { engine.sync() }
        fun set(id: String, value: String) { clock.now += 1000; engine.edit { d, now -> d.set(id, Json.str(value), now) } }
        fun value(id: String) = engine.document()?.liveValues?.get(id)?.string
        fun kekId() = keys.current()!!.kekId
    }

    private fun expectSync(code: SyncException.Code, block: () -> Unit): SyncException {
        try { block() } catch (e: SyncException) { assertEquals(code, e.code, e.message); return e }
        fail<Unit>("expected $code")
        throw AssertionError()
    }

    private fun vault(): Pair<Device, RecoveryCode> {
        val a = Device("A")
        val code = RecoveryCode.generate()
        runSuspending { a.engine.createVault(listOf(Recipient(RecoveryCodeKek(code), "Recovery code"))) }
        a.set("passport", "P-1")
        a.sync()
        return Pair(a, code)
    }

    private fun pair(member: Device, newcomer: Device) {
        val approved = runSuspending { member.engine.approve(PairingRequest.parse(newcomer.engine.pairingRequest().encoded)) }
        assertTrue(runSuspending { newcomer.engine.confirmPairing(approved.confirmationCode) } is SyncReport.Restored)
        member.sync()
    }

    @Test
    fun revokingAThirdDeviceKeepsEveryRemainingAndroidDevice() {
        val (a, _) = vault()
        val phone = Device("Pixel", sdk = 34)
        val oldPhone = Device("Galaxy", sdk = 29)
        val third = Device("Lost tablet", sdk = 33)
        for (d in listOf(phone, oldPhone, third)) pair(a, d)
        phone.sync(); oldPhone.sync()
        val listed = a.engine.devices()
        assertEquals(4, listed.count { !it.isRecoveryPath })
        assertTrue(listed.filter { !it.isRecoveryPath }.all { it.alg == "ECDH-ES+A256KW" }, listed.map { it.alg }.toString())
        // The devices listing shows where this device's key lives.
        assertEquals(KeyStorageLevel.STRONGBOX, phone.engine.devices().single { it.isThisDevice }.keyStorage)
        assertEquals(KeyStorageLevel.SOFTWARE, a.engine.devices().single { it.isThisDevice }.keyStorage)

        // A software member revokes the tablet: the DEK and the vault secret rotate, re-wrapped to both phones.
        val report = runSuspending { a.engine.revoke(third.kekId()) } as SyncReport.Rotated
        assertEquals(listOf("Recovery code"), report.skipped.map { it.label })
        assertEquals(2L, VaultEnvelope.parse(server.current!!.blob).epoch)
        a.set("passport", "P-2")
        a.sync()
        for (d in listOf(phone, oldPhone)) {
            d.sync()
            assertEquals("P-2", d.value("passport"), d.label)
            assertEquals(2L, d.engine.anchor()!!.epoch, d.label)
            // One history on every member: the same text to compare, naming the newest version (FORMAT.md §11.10).
            assertEquals(a.engine.fingerprint(), d.engine.fingerprint(), d.label)
        }
        assertTrue(a.engine.fingerprint()!!.matches(Regex("epoch 2: [0-9a-f]{4}( [0-9a-f]{4}){3}, version [0-9]+: [0-9a-f]{4}( [0-9a-f]{4}){3}")),
            a.engine.fingerprint())
        expectSync(SyncException.Code.REMOVED_FROM_VAULT) { third.sync() }

        // An Android device revokes the old phone: the software member still opens the next epoch.
        runSuspending { phone.engine.revoke(oldPhone.kekId()) }
        phone.set("visa", "V-1")
        phone.sync()
        a.sync()
        assertEquals("V-1", a.value("visa"))
        assertEquals(3L, a.engine.anchor()!!.epoch)
        expectSync(SyncException.Code.REMOVED_FROM_VAULT) { oldPhone.sync() }
    }

    @Test
    fun filesRestoredOntoAnotherPhoneMakeANewDeviceThatPairsOrRecovers() {
        val (a, code) = vault()
        val phone = Device("Pixel", sdk = 34)
        pair(a, phone)
        phone.sync()
        // Auto Backup or a device transfer: the files arrive, the at-rest key and the Keystore keys do not.
        val copied = Files.createTempDirectory("wv-and-restored").toFile()
        phone.directory.copyRecursively(copied, overwrite = true)
        val restored = Device("Pixel (restored)", sdk = 34, directory = copied)
        assertTrue(restored.store.clearedStateSealedElsewhere)
        val refused = expectSync(SyncException.Code.NO_ACCESS) { restored.sync() }
        assertTrue(refused.message!!.contains("pair it or recover"), refused.message)
        // It pairs as a new device...
        pair(a, restored)
        assertEquals("P-1", restored.value("passport"))
        restored.set("visa", "V-1")
        restored.sync()
        a.sync()
        assertEquals("V-1", a.value("visa"))
        // ...or recovers with the recovery code.
        val again = Files.createTempDirectory("wv-and-restored2").toFile()
        phone.directory.copyRecursively(again, overwrite = true)
        val recovered = Device("Pixel (restored again)", sdk = 29, directory = again)
        assertTrue(runSuspending { recovered.engine.recover(RecoveryCodeKek(RecoveryCode.parse(code.formatted))) } is SyncReport.Restored)
        assertEquals("V-1", recovered.value("visa"))
    }

    @Test
    fun aDeviceWhoseKeyWasInvalidatedPairsAgain() {
        val (a, _) = vault()
        for (sdk in listOf(29, 34)) {
            val phone = Device("Phone $sdk", sdk = sdk)
            pair(a, phone)
            val dead = phone.kekId()
            phone.keystore.invalidateAll()
            a.set("passport", "P-$sdk")
            a.sync()
            expectSync(SyncException.Code.KEY_INVALIDATED) { phone.sync() }
            pair(a, phone)
            assertEquals("P-$sdk", phone.value("passport"))
            val entries = a.engine.devices()
            assertFalse(entries.any { it.kekId == dead }, "the dead entry was removed")
            assertTrue(entries.any { it.kekId == phone.kekId() })
            a.set("visa", "V-$sdk")
            a.sync()
            phone.sync()
            assertEquals("V-$sdk", phone.value("visa"))
        }
    }

    @Test
    fun aCancelledPromptIsAuthenticationCanceledAndALockoutNotNow() {
        val (a, _) = vault()
        val phone = Device("Pixel", sdk = 34)
        pair(a, phone)
        a.set("passport", "P-2")
        a.sync()
        phone.prompt.failNext(KeystoreFailure.Prompt(BiometricPromptErrors.ERROR_USER_CANCELED, "Cancel"))
        expectSync(SyncException.Code.AUTHENTICATION_CANCELED) { phone.sync() }
        phone.prompt.failNext(KeystoreFailure.Prompt(BiometricPromptErrors.ERROR_LOCKOUT, "Too many attempts"))
        expectSync(SyncException.Code.NOT_NOW) { phone.sync() }
        phone.keystore.failNext(FakeKeystore.Operation.AGREE, KeystoreFailure.KeyStoreError(true, 4), times = KeystoreKek.KEYSTORE_ATTEMPTS)
        expectSync(SyncException.Code.NOT_NOW) { phone.sync() }
        phone.sync()
        assertEquals("P-2", phone.value("passport"), "nothing was lost: the next sync reads")
    }

    /**
     * A phone paired with [a] whose auth-bound key the Keystore then deleted (the screen lock removed), its files still
     * readable, after [a] saved [item] as [value]: the phone and its dead `kek_id`.
     */
    private fun phoneWhoseKeyTheKeystoreDropped(a: Device, item: String, value: String): Pair<Device, String> {
        val phone = Device("Phone", sdk = 34)
        pair(a, phone)
        val dead = phone.kekId()
        phone.keystore.forgetAll()
        a.set(item, value)
        a.sync()
        expectSync(SyncException.Code.KEY_INVALIDATED) { phone.sync() }
        return Pair(phone, dead)
    }

    @Test
    fun aKeyTheKeystoreDroppedIsInvalidatedAndItsEntryGoesOnRecovery() {
        val (a, code) = vault()
        val (phone, dead) = phoneWhoseKeyTheKeystoreDropped(a, "passport", "P-2")
        assertTrue(runSuspending { phone.engine.recover(RecoveryCodeKek(RecoveryCode.parse(code.formatted))) } is SyncReport.Restored)
        assertEquals("P-2", phone.value("passport"))
        a.sync()
        val entries = a.engine.devices()
        assertFalse(entries.any { it.kekId == dead }, "the dead entry stayed in the vault")
        assertTrue(entries.any { it.kekId == phone.kekId() }, "the phone's new key is in the vault")
        assertEquals(2, a.engine.keyHealth().deviceKeys)
    }

    @Test
    fun aDeviceWhoseKeyTheKeystoreDroppedPairsAgainAndItsDeadEntryGoes() {
        val (a, _) = vault()
        val (phone, dead) = phoneWhoseKeyTheKeystoreDropped(a, "visa", "V-1")
        assertEquals(listOf(dead), phone.engine.devices().filter { it.label == "Phone" }.map { it.kekId }, "the listing still works")
        pair(a, phone)
        assertFalse(a.engine.devices().any { it.kekId == dead }, "the dead entry stayed in the vault")
        assertTrue(a.engine.devices().any { it.kekId == phone.kekId() }, "the phone's new key is in the vault")
        assertEquals("V-1", phone.value("visa"))
    }
}
