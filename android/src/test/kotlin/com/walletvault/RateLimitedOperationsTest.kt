package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/**
 * An operation that saves (approving a device, revoking one, restoring a kept version) and meets the server's hourly
 * cap records the next allowed attempt as a sync does, and reports the cap as its result allows: a revoke as
 * [SyncReport.RateLimited], an approval and a restore (whose results have no such form) as `SERVER` with
 * [BackupError.RateLimited]. Before, none recorded the time (the Swift SDK's
 * anOperationThatSavesReportsTheRateLimitAsASyncDoes).
 */
class RateLimitedOperationsTest {
    private val server = FakeServer()
    private val clock = FakeClock()

    @ParameterizedTest
    @ValueSource(strings = ["approve", "revoke", "restoreVersion"])
    fun anOperationThatSavesRecordsTheRateLimitAsASyncDoes(operation: String) {
        val laptop = TestProfile(clock, server)
        val phone = TestProfile(clock, server)
        val created = runSuspending { laptop.engine.createVault() }
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
                    else -> laptop.engine.restoreVersion(created.version!!)
                }
            }
        }
        server.rateLimitSaves = true
        val expected = clock.now + 120_000L
        if (operation == "revoke") {
            val report = run()
            assertTrue(report is SyncReport.RateLimited, report.toString())
            assertEquals(expected, (report as SyncReport.RateLimited).nextAttemptAt)
        } else {
            val e = expectSyncFailure(SyncException.Code.SERVER) { run() }
            assertTrue(e.backupError is BackupError.RateLimited, e.toString())
        }
        assertEquals(expected, laptop.engine.status().nextAttemptAt, "the next allowed attempt was not recorded")
        server.rateLimitSaves = false
        val report = run()
        assertTrue(report !is SyncReport.RateLimited, "the operation did not go through once the cap allowed it: $report")
    }
}
