package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource
import java.nio.file.Files
import javax.crypto.spec.SecretKeySpec

/**
 * A create (`If-None-Match: *`) the server stored but whose answer was lost is this device's own vault, not "a vault
 * already exists" (the Swift SDK's SDKEndToEndTests.aCreateWhoseAnswerWasLost...).
 */
class LostCreateAnswerTest {
    private val server = FakeServer()
    private val clock = FakeClock()

    /** A P-256 key, as every Android device's: its ECDH-ES entry does not authenticate the vault, the pinned anchor does. */
    private fun p256Keys() = SoftwareDeviceKeys(LocalVaultStore(Files.createTempDirectory("wv-keys").toFile(), SecretKeySpec(Crypto.randomBytes(32), "AES")))

    /** With one attempt the lost answer is a network error; with two the resend meets the 409 its first attempt caused. */
    @ParameterizedTest
    @ValueSource(ints = [1, 2])
    fun aCreateWhoseAnswerWasLostLeavesAVaultItsCreatorReads(attempts: Int) {
        val a = TestProfile(clock, server, p256Keys(), retryPolicy = RetryPolicy(maxAttempts = attempts))
        val code = RecoveryCode.generate()
        server.saveAnswersLostNext = 1
        val report = runSuspending { a.engine.createVault(listOf(Recipient(RecoveryCodeKek(code), "Recovery code"))) }
        assertTrue(report is SyncReport.Created, report.toString())
        assertEquals(server.current!!.syncId, report.version)
        assertNotNull(a.engine.anchor())
        a.set("passport", "P-1")
        assertTrue(a.sync() is SyncReport.Pushed, "A cannot save over its own vault")
        val b = TestProfile(clock, server)
        runSuspending { b.engine.recover(RecoveryCodeKek(code)) }
        assertEquals("P-1", b.value("passport"))
    }

    @Test
    fun aCreateOverAnotherDevicesVaultIsStillAConflict() {
        val a = TestProfile(clock, server, p256Keys())
        val b = TestProfile(clock, server, p256Keys())
        runSuspending { a.engine.createVault() }
        runSuspending { b.engine.history() }
        // B's save is lost on the way out; its resend meets A's vault.
        server.networkErrorsNext = 1
        val e = expectSyncFailure(SyncException.Code.SERVER) { runSuspending { b.engine.createVault() } }
        assertTrue(e.backupError is BackupError.Conflict, e.toString())
        assertEquals(1, server.saves.get())
        assertNull(b.engine.status().syncedVersion)
        assertNull(b.engine.anchor())
    }
}
