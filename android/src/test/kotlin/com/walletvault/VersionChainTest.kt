package com.walletvault

import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test

/** Issue 26 point 7: each version names its predecessor's digest (`previous`, FORMAT.md §11.10), so a version that does not follow the one accepted below it is a fork. */
class VersionChainTest {
    private val phone = StoredKeyKek.generate()
    private val laptop = StoredKeyKek.generate()
    private val tablet = StoredKeyKek.generate()
    private val phoneStore = InMemoryCounterStore()
    private val phoneSealer = VaultSealer(phoneStore, hint = "Phone")
    private val created: SealedVault = runSuspending {
        phoneSealer.create(TestSupport.plaintext, "v", listOf(Recipient(phone, "Phone"), Recipient(laptop, "Laptop"), Recipient(tablet, "Tablet")))
    }.also { phoneSealer.markAccepted(it) }

    private fun open(store: InMemoryCounterStore, blob: ByteArray, key: KeyEncryptionKey) =
        runSuspending { VaultOpener(store).open(blob, "v", listOf(key)) }

    @Test
    fun aVersionThatDoesNotFollowTheOneAcceptedBelowItIsAForkAndNothingIsStored() {
        // The laptop writes version 2, which the phone reads.
        val laptopStore = InMemoryCounterStore()
        val laptopSealer = VaultSealer(laptopStore, hint = "Laptop")
        val v2 = runSuspending { laptopSealer.seal(TestSupport.plaintext, open(laptopStore, created.blob, laptop).state) }
        laptopSealer.markAccepted(v2)
        open(phoneStore, v2.blob, phone)
        assertArrayEquals(VersionDigests.of(created.state.envelope), v2.state.envelope.previous)
        // The server kept the laptop's version from the tablet, which wrote its own 2 over 1, then 3 over that.
        val tabletStore = InMemoryCounterStore()
        val tabletSealer = VaultSealer(tabletStore, hint = "Tablet")
        val forked2 = runSuspending { tabletSealer.seal(TestSupport.plaintext, open(tabletStore, created.blob, tablet).state) }
        tabletSealer.markAccepted(forked2)
        val forked3 = runSuspending { tabletSealer.seal(TestSupport.plaintext, forked2.state) }
        TestSupport.expectThrows<VaultException.ForkDetected> { open(phoneStore, forked3.blob, phone) }
        assertEquals(2L, phoneStore.highest("v"))
        // The laptop's 3, over the 2 the phone read, follows it.
        val v3 = runSuspending { laptopSealer.seal(TestSupport.plaintext, v2.state) }
        assertEquals(3L, open(phoneStore, v3.blob, phone).state.counter)
    }

    @Test
    fun aVersionWithoutTheLinkAfterOneThisDeviceAcceptedIsAForkAndTheLinkCannotBeStripped() {
        val reader = InMemoryCounterStore()
        open(reader, created.blob, laptop)
        // A member's version 2 as an earlier writer wrote it: the vault's DEK, entries and secret, no `previous`.
        val secrets = created.state.secrets!!
        val unlinked = Forger.blob(created.state.dek, created.state.entries, 2, Forger.Anchor(secrets.id, secrets.epoch, secrets.secrets))
        assertNull(VaultEnvelope.parse(unlinked).previous)
        TestSupport.expectThrows<VaultException.ForkDetected> { open(reader, unlinked, laptop) }
        // Taking the link out of a genuine version breaks its tag (previous is in the AAD).
        val linked = runSuspending { phoneSealer.seal(TestSupport.plaintext, created.state) }
        val stripped = TestSupport.edit(linked.blob) { it.remove("previous") }
        TestSupport.expectThrows<VaultException.CiphertextAltered> { open(reader, stripped, laptop) }
        assertEquals(1L, reader.highest("v"))
    }

    @Test
    fun theFingerprintNamesTheNewestVersionsDigest() {
        val digests = listOf(created.state.envelope, runSuspending { phoneSealer.seal(TestSupport.plaintext, created.state) }.state.envelope)
            .map { VaultAnchor.grouped(VersionDigests.of(it)!!) }
        assertNotEquals(digests[0], digests[1])
        assertEquals(19, digests[0].length)
    }
}
