package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/**
 * An operation that saves (approving a device, revoking one, restoring a kept version, recovering) and meets the
 * server's hourly cap records the next allowed attempt as a sync does, and fails with `SERVER` and
 * [BackupError.RateLimited]: unlike a sync's edits it is not saved later by itself, so it is no
 * [SyncReport.RateLimited]. Before, none recorded the time (the Swift SDK's anOperationThatSavesRecordsTheRateLimitAndFails).
 */
class RateLimitedOperationsTest {
    private val server = FakeServer()
    private val clock = FakeClock()

    @ParameterizedTest
    @ValueSource(strings = ["approve", "revoke", "restoreVersion", "recover"])
    fun anOperationThatSavesRecordsTheRateLimitAsASyncDoes(operation: String) {
        val laptop = TestProfile(clock, server)
        val phone = TestProfile(clock, server)
        val code = RecoveryCode.generate()
        val created = runSuspending { laptop.engine.createVault(listOf(Recipient(RecoveryCodeKek(code), "Recovery code"))) }
        laptop.set("x", "1")
        laptop.sync()
        val approved = runSuspending { laptop.engine.approve(PairingRequest.parse(phone.engine.pairingRequest().encoded)) }
        runSuspending { phone.engine.confirmPairing(approved.confirmationCode) }
        laptop.sync()
        val newcomer = TestProfile(clock, server)
        val request = PairingRequest.parse(runSuspending { newcomer.engine.pairingRequest() }.encoded)
        val phoneKekId = laptop.engine.devices().first { !it.isThisDevice && !it.isRecoveryPath }.kekId
        val run: () -> SyncReport = {
            runSuspending {
                when (operation) {
                    "approve" -> laptop.engine.approve(request)
                    "revoke" -> laptop.engine.revoke(phoneKekId)
                    "recover" -> laptop.engine.recover(RecoveryCodeKek(code))
                    else -> laptop.engine.restoreVersion(created.version!!)
                }
            }
        }
        server.rateLimitSaves = true
        val expected = clock.now + 120_000L
        val e = expectSyncFailure(SyncException.Code.SERVER) { run() }
        assertTrue(e.backupError is BackupError.RateLimited, e.toString())
        assertEquals(expected, laptop.engine.status().nextAttemptAt, "the next allowed attempt was not recorded")
        server.rateLimitSaves = false
        val report = run()
        assertTrue(report !is SyncReport.RateLimited, "the operation did not go through once the cap allowed it: $report")
    }

    /**
     * A merge whose save met the cap (Swift's aMergeWhoseSaveMetTheCapLeavesNoFalseRollback): the version it merged
     * over was opened and its counter accepted, so an operation opening the synced copy afterwards must not take the
     * copy for a rollback. The revoke of a lost phone goes through.
     */
    @Test
    fun aMergeWhoseSaveMetTheCapLeavesNoFalseRollback() {
        val laptop = TestProfile(clock, server)
        val phone = TestProfile(clock, server)
        runSuspending { laptop.engine.createVault() }
        laptop.set("x", "1")
        laptop.sync()
        val approved = runSuspending { laptop.engine.approve(PairingRequest.parse(phone.engine.pairingRequest().encoded)) }
        runSuspending { phone.engine.confirmPairing(approved.confirmationCode) }
        laptop.sync()
        val phoneKekId = laptop.engine.devices().first { !it.isThisDevice && !it.isRecoveryPath }.kekId
        phone.set("y", "from the phone")
        phone.sync()
        laptop.set("z", "from the laptop")
        server.rateLimitSaves = true
        assertTrue(laptop.sync() is SyncReport.RateLimited)
        server.rateLimitSaves = false
        assertTrue(laptop.engine.status().hasLocalEdits)
        runSuspending { laptop.engine.revoke(phoneKekId) }
        assertFalse(laptop.engine.devices().any { it.kekId == phoneKekId })
        assertEquals("from the phone", laptop.engine.document()!!.liveValues["y"]?.string)
        assertEquals("from the laptop", laptop.engine.document()!!.liveValues["z"]?.string)
    }

    /** [laptop]'s vault, created with one item, and [others] paired to it. */
    private fun vaultWith(laptop: TestProfile, vararg others: TestProfile) {
        runSuspending { laptop.engine.createVault() }
        laptop.set("x", "1")
        laptop.sync()
        for (other in others) {
            val approved = runSuspending { laptop.engine.approve(PairingRequest.parse(other.engine.pairingRequest().encoded)) }
            runSuspending { other.engine.confirmPairing(approved.confirmationCode) }
            laptop.sync()
        }
    }

    /**
     * A sync while this device's saves wait out the hourly cap still loads (Swift's
     * aSyncDuringTheCapsPauseTakesInAnotherDevicesSaveAndSavesNothing): the phone's save is merged under the laptop's
     * pending edit and becomes the synced version, and nothing is saved until the pause ends. Before, such a sync
     * loaded nothing until then (up to an hour).
     */
    @Test
    fun aSyncDuringTheCapsPauseTakesInAnotherDevicesSaveAndSavesNothing() {
        val laptop = TestProfile(clock, server)
        val phone = TestProfile(clock, server)
        vaultWith(laptop, phone)
        laptop.set("z", "from the laptop")
        server.rateLimitSaves = true
        assertTrue(laptop.sync() is SyncReport.RateLimited)
        server.rateLimitSaves = false
        phone.set("y", "from the phone")
        val fromPhone = phone.sync().version
        assertTrue(laptop.sync() is SyncReport.RateLimited, "the pause should hold")
        val values = laptop.engine.document()!!.liveValues
        assertEquals(listOf("1", "from the phone", "from the laptop"), listOf("x", "y", "z").map { values[it]?.string })
        val status = laptop.engine.status()
        assertEquals(fromPhone, status.syncedVersion, "the phone's version is the synced one")
        assertTrue(status.hasLocalEdits, "the laptop's edit is still to be saved")
        assertTrue(status.nextAttemptAt != null, "the pause is kept")
        assertTrue(phone.sync() is SyncReport.UpToDate, "the laptop saved during the pause")
    }

    /**
     * A revocation while this device's saves wait out a cap that has ended on the server (Swift's
     * aRevocationDuringTheCapsPauseSavesOverTheVersionTheServerHoldsNow): before, the sync before it loaded nothing,
     * and every attempt saved over the version last synced and met the 409 of the tablet's newer save.
     */
    @Test
    fun aRevocationDuringTheCapsPauseSavesOverTheVersionTheServerHoldsNow() {
        val laptop = TestProfile(clock, server)
        val tablet = TestProfile(clock, server)
        vaultWith(laptop, tablet)
        val tabletKekId = tablet.engine.devices().first { it.isThisDevice }.kekId
        laptop.set("z", "from the laptop")
        server.rateLimitSaves = true
        assertTrue(laptop.sync() is SyncReport.RateLimited)
        server.rateLimitSaves = false
        // The stolen tablet saves once more before it is revoked.
        tablet.set("y", "from the tablet")
        tablet.sync()
        runSuspending { laptop.engine.revoke(tabletKekId) }
        val values = laptop.engine.document()!!.liveValues
        assertEquals(listOf("1", "from the tablet", "from the laptop"), listOf("x", "y", "z").map { values[it]?.string })
        assertFalse(laptop.engine.status().hasLocalEdits, "the revocation saved the pending edit with it")
        assertFalse(laptop.engine.devices().any { it.kekId == tabletKekId })
        expectSyncFailure(SyncException.Code.REMOVED_FROM_VAULT) { tablet.sync() }
    }
}
