package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** FORMAT.md §11.7 "Forks and restores": version digests, fork detection and the restore rule. */
class ForkAndRestoreTest {
    private val phone = StoredKeyKek.generate()
    private val laptop = StoredKeyKek.generate()
    private val reader = StoredKeyKek.generate()
    private val phoneStore = InMemoryCounterStore()
    private val phoneSealer = VaultSealer(phoneStore, hint = "Phone")
    private val created: SealedVault = runSuspending {
        phoneSealer.create(TestSupport.plaintext, "v", listOf(Recipient(phone, "Phone"), Recipient(laptop, "Laptop"), Recipient(reader, "Reader")))
    }.also { phoneSealer.markAccepted(it) }

    private fun open(store: InMemoryCounterStore, blob: ByteArray, key: KeyEncryptionKey) =
        runSuspending { VaultOpener(store).open(blob, "v", listOf(key)) }

    /** Phone and laptop each write counter 2 over version 1. */
    private fun twoVersionsAtCounterTwo(): Pair<SealedVault, SealedVault> {
        val laptopStore = InMemoryCounterStore()
        val laptopView = open(laptopStore, created.blob, laptop)
        val fromPhone = runSuspending { phoneSealer.seal(Crypto.utf8("{\"items\":{\"a\":{}}}"), created.state) }
        val fromLaptop = runSuspending { VaultSealer(laptopStore, hint = "Laptop").seal(Crypto.utf8("{\"items\":{\"b\":{}}}"), laptopView.state) }
        assertEquals(2L, fromPhone.state.counter)
        assertEquals(2L, fromLaptop.state.counter)
        return Pair(fromPhone, fromLaptop)
    }

    @Test
    fun aReaderThatAcceptedOneVersionRefusesAnotherAtTheSameCounter() {
        val (first, second) = twoVersionsAtCounterTwo()
        val store = InMemoryCounterStore()
        open(store, created.blob, reader)
        open(store, first.blob, reader)
        val counter = store.highest("v")
        val anchor = store.anchor("v")
        TestSupport.expectThrows<VaultException.ForkDetected> { open(store, second.blob, reader) }
        assertEquals(counter, store.highest("v"))
        assertEquals(anchor, store.anchor("v"))
        TestSupport.assertBytes(VersionDigests.of(first.state.envelope)!!, store.acceptedDigest("v", 2)!!)
        // The version it accepted still opens.
        open(store, first.blob, reader)
    }

    @Test
    fun theWriterOfOneVersionRefusesTheOther() {
        val (first, second) = twoVersionsAtCounterTwo()
        phoneSealer.markAccepted(first)
        TestSupport.expectThrows<VaultException.ForkDetected> { open(phoneStore, second.blob, phone) }
        assertEquals(2L, phoneStore.highest("v"))
    }

    @Test
    fun aRevokedDevicesOldEpochVersionIsNotRestorableButTheMembersOwnIs() {
        val revoked = StoredKeyKek.generate()
        val start = runSuspending { phoneSealer.seal(TestSupport.plaintext, phoneSealer.enroll(revoked, "Old phone", created.state)) }
        phoneSealer.markAccepted(start)
        val laptopStore = InMemoryCounterStore()
        open(laptopStore, start.blob, laptop)
        // The revoked device read epoch 1: it knows the DEK and S_1.
        val revokedView = open(InMemoryCounterStore(), start.blob, revoked)
        val genuine = runSuspending { phoneSealer.rotateDek(TestSupport.plaintext, phoneSealer.revoke(revoked.kekId, start.state), listOf(phone, laptop)) }
        phoneSealer.markAccepted(genuine)
        val current = open(laptopStore, genuine.blob, laptop).state
        assertEquals(2L, current.envelope.epoch)
        // Its own epoch-1 version, still wrapped to the laptop (same entries, same DEK), offered as a kept version.
        val forged = runSuspending { VaultSealer(InMemoryCounterStore().also { it.advance("v", 1) }).seal(Crypto.utf8("{\"items\":{}}"), revokedView.state) }
        assertEquals(1L, forged.state.envelope.epoch)
        val before = laptopStore.highest("v")
        val refused = TestSupport.expectThrows<VaultException.Downgrade> {
            runSuspending { VaultOpener(laptopStore).openPastVersion(forged.blob, "v", listOf(laptop), current) }
        }
        assertEquals(true, refused.message!!.contains("removed device"))
        assertEquals(before, laptopStore.highest("v"))
        // The epoch-1 version the laptop accepted, and the one the phone wrote, are restorable.
        runSuspending { VaultOpener(laptopStore).openPastVersion(start.blob, "v", listOf(laptop), current) }
        runSuspending { VaultOpener(phoneStore).openPastVersion(start.blob, "v", listOf(phone), genuine.state) }
        // A version of the current epoch needs no digest.
        val sameEpoch = runSuspending { phoneSealer.seal(TestSupport.plaintext, genuine.state) }
        runSuspending { VaultOpener(InMemoryCounterStore().also { it.pin("v", genuine.state.anchor!!) }).openPastVersion(sameEpoch.blob, "v", listOf(laptop), current) }
    }

    @Test
    fun digestsSurviveARestartAndAtMost64AreKept() {
        val directory = java.nio.file.Files.createTempDirectory("wv-fork").toFile()
        val key = javax.crypto.spec.SecretKeySpec(Crypto.randomBytes(32), "AES")
        val store = LocalVaultStore(directory, key)
        val sealer = VaultSealer(store.counters, anchors = store.anchors)
        var last = runSuspending { sealer.create(TestSupport.plaintext, "v", listOf(Recipient(phone, "Phone"), Recipient(laptop, "Laptop"))) }
        sealer.markAccepted(last)
        val laptopStore = InMemoryCounterStore()
        var laptopView = open(laptopStore, last.blob, laptop)
        for (i in 2..70) {
            last = runSuspending { sealer.seal(TestSupport.plaintext, last.state) }
            sealer.markAccepted(last)
        }
        assertEquals(70L, last.state.counter)
        val reopened = LocalVaultStore(directory, key)
        for (c in 1L..6L) assertEquals(null, reopened.counters.acceptedDigest("v", c), "counter $c should have been dropped")
        for (c in 7L..70L) assertEquals(true, reopened.counters.acceptedDigest("v", c) != null, "counter $c should be kept")
        TestSupport.assertBytes(VersionDigests.of(last.state.envelope)!!, reopened.counters.acceptedDigest("v", 70)!!)
        // Another version at counter 70 (the laptop, from version 1 with its counter at 69) is a fork after the restart.
        laptopStore.advance("v", 69)
        val other = runSuspending { VaultSealer(laptopStore).seal(Crypto.utf8("{\"items\":{}}"), laptopView.state) }
        assertEquals(70L, other.state.counter)
        TestSupport.expectThrows<VaultException.ForkDetected> {
            runSuspending { VaultOpener(reopened.counters, reopened.anchors).open(other.blob, "v", listOf(phone)) }
        }
        assertEquals(70L, LocalVaultStore(directory, key).counters.highest("v"))
        directory.deleteRecursively()
    }
}
