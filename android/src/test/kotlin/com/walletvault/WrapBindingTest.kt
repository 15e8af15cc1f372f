package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Issue 26 point 5: every symmetric entry of an anchored blob is bound to its vault and epoch (FORMAT.md §11.9). */
class WrapBindingTest {
    private val phone = DeviceKek.generate()
    private val code = RecoveryCode.generate()
    private val recovery = RecoveryCodeKek(code)
    private val sealer = VaultSealer(InMemoryCounterStore(), hint = "Phone")
    private val created: SealedVault = runSuspending {
        sealer.create(TestSupport.plaintext, "v", listOf(Recipient(phone, "Phone"), Recipient(recovery, "Recovery code")))
    }

    /** What a removed member and the server write with what the member kept: its DEK and entries, a next epoch of its own. */
    private fun forgedNextEpoch(state: VaultState): ByteArray {
        val forged = VaultState(state.vaultId, state.envelope, state.entries, state.dek, state.secrets!!.rotated())
        return runSuspending { VaultSealer(InMemoryCounterStore(), hint = "Forger").seal(Crypto.utf8("{\"items\":{}}"), forged).blob }
    }

    @Test
    fun aRecoveryWrapCopiedIntoANewerEpochIsRefusedAndNothingIsStored() {
        val forged = forgedNextEpoch(created.state)
        val store = InMemoryCounterStore()
        TestSupport.expectThrows<VaultException.WriterNotMember> { runSuspending { VaultOpener(store).open(forged, "v", listOf(RecoveryCodeKek(code))) } }
        assertEquals(0L, store.highest("v"))
        assertNull(store.anchor("v"))
    }

    @Test
    fun theGenuineRevocationsEntriesAreBoundToTheNewEpochAndOpen() {
        val rotated = runSuspending { sealer.rotateDek(TestSupport.plaintext, created.state, listOf(phone, recovery), rotateVaultSecret = true) }
        val store = InMemoryCounterStore()
        runSuspending { VaultOpener(store).open(rotated.blob, "v", listOf(RecoveryCodeKek(code))) }
        assertEquals(rotated.state.anchor, store.anchor("v"))
        assertEquals(2L, rotated.state.secrets!!.epoch)
        // A symmetric entry wraps DEK ‖ vault_id ‖ epoch (64 bytes of RFC 3394), the device's public-key entry the DEK.
        val lengths = rotated.state.entries.map { Pair(it.scheme.alg, it.dekCipher.size) }
        assertTrue(Pair("A256KW", 64) in lengths, lengths.toString())
        assertTrue(Pair("ECDH-ES+A256KW", 40) in lengths, lengths.toString())
    }

    @Test
    fun anUnboundSymmetricWrapProvesItsWriterOnlyAtEpochOne() {
        val secrets = created.state.secrets!!
        assertTrue(WrapBinding.provesWriter(null, true, secrets))
        assertFalse(WrapBinding.provesWriter(null, true, secrets.rotated()))
        assertFalse(WrapBinding.provesWriter(null, false, secrets))
        // A binding to another epoch is a copy: refused, not merely unproven.
        val (_, binding) = WrapBinding.split(WrapBinding.payload(ByteArray(32), recovery, secrets), true)
        TestSupport.expectThrows<VaultException.WriterNotMember> { WrapBinding.provesWriter(binding, true, secrets.rotated()) }
    }

    @Test
    fun anUnboundEntryAboveEpochOneOpensForAPinnedMemberAndAsksTheOthersToConfirm() {
        val rotated = runSuspending { sealer.rotateDek(TestSupport.plaintext, created.state, listOf(phone, recovery), rotateVaultSecret = true) }
        val unbound = runSuspending { recovery.wrap(rotated.state.dek) }.labeled("Recovery code", "2026-12-02T00:00:00.000Z")
        val state = VaultState("v", rotated.state.envelope, listOf(unbound), rotated.state.dek, rotated.state.secrets)
        val blob = runSuspending { VaultSealer(InMemoryCounterStore(), hint = "Earlier writer").seal(TestSupport.plaintext, state).blob }
        val unpinned = InMemoryCounterStore()
        TestSupport.expectThrows<VaultException.UnconfirmedVault> { runSuspending { VaultOpener(unpinned).open(blob, "v", listOf(RecoveryCodeKek(code))) } }
        assertNull(unpinned.anchor("v"))
        val member = InMemoryCounterStore().also { it.pin("v", created.state.anchor!!) }
        assertEquals(2L, runSuspending { VaultOpener(member).open(blob, "v", listOf(RecoveryCodeKek(code))) }.state.secrets!!.epoch)
    }

    @Test
    fun aBoundPayloadInAPublicKeyEntryIsRefused() {
        val payload = WrapBinding.payload(Crypto.randomBytes(32), recovery, created.state.secrets)
        assertEquals(WrapBinding.PAYLOAD_BYTES, payload.size)
        TestSupport.expectThrows<VaultException.UnwrapFailed> { WrapBinding.split(payload, false) }
    }
}
