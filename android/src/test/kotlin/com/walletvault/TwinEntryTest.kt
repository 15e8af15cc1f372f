package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/**
 * A phone whose key is a self-ECDH P-256 key (an iPhone's Secure Enclave key, as the Swift SDK enrolls it) approved
 * again while a member holds two entries for one key: its self-ECDH entry and an ECDH-ES entry to the same key's
 * public half. Revoking it by its own entry must remove both, or the revoked phone still opens every later version
 * through the other (the Swift SDK's TwinEntryTests; security review, finding 1); revoking the public-key entry does
 * not widen to the phone's own entry, which leaves as a skipped entry, as in any rotation by another device.
 */
class TwinEntryTest {
    private val server = FakeServer()
    private val clock = FakeClock()

    /** A device store that holds one self-ECDH key. */
    private class SelfEcdhKeys(private val key: SelfEcdhKek) : DeviceKeyStore {
        override fun current(): KeyEncryptionKey = key
        override suspend fun create(): KeyEncryptionKey = key
    }

    @ParameterizedTest
    @ValueSource(booleans = [false, true])
    fun revokingAPhoneRemovesEveryEntryOfItsKey(byPublicKeyEntry: Boolean) {
        val laptop = TestProfile(clock, server)
        val phoneKey = SelfEcdhKek.generate()
        val phone = TestProfile(clock, server, SelfEcdhKeys(phoneKey))
        runSuspending { laptop.engine.createVault() }
        laptop.set("passport", "P1")
        laptop.sync()
        val approved = runSuspending { laptop.engine.approve(PairingRequest.parse(phone.engine.pairingRequest().encoded)) }
        runSuspending { phone.engine.confirmPairing(approved.confirmationCode) }
        val raw = Base64Url.decode(phoneKey.kekId)!!
        val twin = PublicJwk.P256(raw.copyOfRange(0, 32), raw.copyOfRange(32, 64))
        laptop.sync()
        runSuspending { laptop.engine.approve(PairingRequest(twin, "iPhone")) }
        val twinKekId = PublicKeyRecipient(twin).kekId
        val before = storedKekIds()
        assertTrue(before.contains(phoneKey.kekId) && before.contains(twinKekId), "the scenario needs both entries: $before")
        val report = runSuspending { laptop.engine.revoke(if (byPublicKeyEntry) twinKekId else phoneKey.kekId) } as SyncReport.Rotated
        val after = storedKekIds()
        assertFalse(after.contains(twinKekId), "the ECDH-ES entry to the phone's key survived the revocation")
        assertFalse(after.contains(phoneKey.kekId), "the phone's self-ECDH entry survived the revocation")
        assertEquals(1, after.size, after.toString())
        // Revoked by its public-key entry (which anyone can ask for with the phone's public key), the phone's own entry
        // is not removed as its twin: it leaves as every self-ECDH entry does in another device's rotation, named among
        // the skipped (its holder must wrap), so the user is told the phone must pair again.
        assertEquals(if (byPublicKeyEntry) listOf(phoneKey.kekId) else emptyList<String>(), report.skipped.map { it.kekId })
    }

    private fun storedKekIds(): List<String> = VaultEnvelope.parse(server.current!!.blob).entries.map { it.kekId }
}
