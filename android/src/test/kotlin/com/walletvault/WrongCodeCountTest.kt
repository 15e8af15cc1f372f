package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File
import java.nio.file.Files
import java.util.Locale
import javax.crypto.spec.SecretKeySpec

/**
 * The cap of three wrong confirmation codes holds per pairing request, whichever of this device's entries the
 * server's blob is read through. A device that is no member yet but has a device key (one that erased its account,
 * say) opens a blob wrapped to that key as well as one wrapped to its pairing key; a lying server serving the two in
 * turn reset the count at each switch (it was kept for one kek_id at a time), so the pairing was never voided and the
 * guesses had no end (security review, finding 5). Swift counts per pairing request.
 */
class WrongCodeCountTest {
    private val server = FakeServer()
    private val clock = FakeClock()

    private fun p256Keys() = SoftwareDeviceKeys(LocalVaultStore(Files.createTempDirectory("wv-keys").toFile(), SecretKeySpec(Crypto.randomBytes(32), "AES")))

    private fun wrongCode(code: String) = String.format(Locale.ROOT, "%06d", (code.replace(" ", "").toInt() + 1) % 1_000_000)

    @Test
    fun threeWrongCodesEndThePairingWhicheverEntryTheBlobIsReadThrough() {
        val a = TestProfile(clock, server)
        val bKeys = p256Keys()
        val b = TestProfile(clock, server, bKeys)
        runSuspending { a.engine.createVault() }
        a.set("passport", "P-1")
        a.sync()
        val device = runSuspending { bKeys.create() } as DeviceKek
        // What a server could serve: the vault wrapped to B's device key alone, and the one the pairing approved.
        runSuspending { a.engine.approve(PairingRequest(device.publicKey, "B")) }
        val throughDeviceKey = server.current!!
        val request = runSuspending { b.engine.pairingRequest() }
        val approved = runSuspending { a.engine.approve(PairingRequest.parse(request.encoded)) }
        val throughPairingKey = server.current!!
        val wrong = wrongCode(approved.confirmationCode)
        for (attempt in 1..3) {
            synchronized(server) {
                server.versions.clear()
                server.versions.add(if (attempt % 2 == 1) throughDeviceKey else throughPairingKey)
            }
            val e = expectSyncFailure(SyncException.Code.CONFIRMATION_MISMATCH) { runSuspending { b.engine.confirmPairing(wrong) } }
            assertEquals(attempt == 3, e.message!!.contains("start again"), "attempt $attempt: ${e.message}")
        }
        assertFalse(File(b.directory, "pairing-key.sealed").exists(), "the pairing request survived three wrong codes")
        assertTrue(runSuspending { b.engine.pairingRequest() }.publicKey != request.publicKey)
    }
}
