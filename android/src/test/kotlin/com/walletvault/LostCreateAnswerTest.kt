package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource
import java.io.File
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

    /**
     * The create reaches the server and its answer is lost, and so is the load that would have shown the vault to be
     * the one sent (each of the client's attempts at both): the create fails, and trying again adopts the vault of
     * that attempt (the exact bytes this device sent, which it kept) instead of meeting a conflict with its own
     * vault, which no device could then open without a recovery code (the Swift SDK's
     * aCreateWhoseAnswerAndCheckWereLostIsAdoptedWhenTriedAgain). An edit made in between stays pending.
     */
    @ParameterizedTest
    @ValueSource(ints = [1, 2])
    fun aCreateWhoseAnswerAndCheckWereLostIsAdoptedWhenTriedAgain(attempts: Int) {
        val a = TestProfile(clock, server, p256Keys(), retryPolicy = RetryPolicy(maxAttempts = attempts))
        server.saveAnswersLostNext = 1
        server.loadErrorsNext = attempts
        // One attempt: the lost answer is a network error; two: the resend meets the 409 its first attempt caused.
        expectSyncFailure(if (attempts == 1) SyncException.Code.OFFLINE else SyncException.Code.SERVER) { runSuspending { a.engine.createVault() } }
        val first = server.current
        assertNotNull(first, "the first attempt stored nothing")
        a.set("passport", "P-1")
        val report = runSuspending { a.engine.createVault() }
        assertTrue(report is SyncReport.Created, report.toString())
        assertEquals(first!!.syncId, report.version)
        assertEquals(1, server.versions.size, "the retry stored a second vault")
        assertNotNull(a.engine.anchor())
        assertFalse(pendingCreateKept(a), "the adopted create is still pending")
        assertTrue(a.engine.status().hasLocalEdits, "the edit made before the retry is not pending")
        assertTrue(a.sync() is SyncReport.Pushed, "A cannot save over its own vault")
        val b = TestProfile(clock, server, p256Keys())
        val approved = runSuspending { a.engine.approve(PairingRequest.parse(b.engine.pairingRequest().encoded)) }
        assertTrue(runSuspending { b.engine.confirmPairing(approved.confirmationCode) } is SyncReport.Restored)
        assertEquals("P-1", b.value("passport"))
    }

    /**
     * A sync instead of a second create adopts the pending create as well: before, it could not open the device's own
     * vault (a public-key entry with no anchor pinned) and asked for a pairing or a recovery.
     */
    @Test
    fun aSyncAfterACreateWhoseAnswerAndCheckWereLostAdoptsIt() {
        val a = profileWithACreateWhoseAnswerAndCheckWereLost()
        val first = server.current
        assertNotNull(first, "the first attempt stored nothing")
        val report = a.sync()
        assertTrue(report is SyncReport.UpToDate, report.toString())
        assertEquals(first!!.syncId, a.engine.status().syncedVersion)
        assertNotNull(a.engine.anchor())
        assertFalse(pendingCreateKept(a), "the adopted create is still pending")
        a.set("passport", "P-1")
        assertTrue(a.sync() is SyncReport.Pushed, "A cannot save over its own vault")
    }

    /**
     * A retry that passes another recovery code than the attempt it adopts is told so (the vault is created, without
     * that code), and the code replaces the first through [VaultSyncEngine.replaceRecoveryPaths] (the Swift SDK's
     * aRetryWithOtherRecoveryPathsIsToldTheAdoptedVaultLacksThem).
     */
    @Test
    fun aRetryWithAnotherRecoveryCodeIsToldTheAdoptedVaultLacksIt() {
        val a = TestProfile(clock, server, p256Keys(), retryPolicy = RetryPolicy(maxAttempts = 1))
        val first = RecoveryCodeKek(RecoveryCode.generate())
        val second = RecoveryCodeKek(RecoveryCode.generate())
        server.saveAnswersLostNext = 1
        server.loadErrorsNext = 1
        expectSyncFailure(SyncException.Code.OFFLINE) { runSuspending { a.engine.createVault(listOf(Recipient(first, "Recovery code"))) } }
        expectSyncFailure(SyncException.Code.INVALID_INPUT) {
            runSuspending { a.engine.createVault(listOf(Recipient(second, "Recovery code"))) }
        }
        assertTrue(runSuspending { a.engine.devices() }.any { it.kekId == first.kekId })
        runSuspending { a.engine.replaceRecoveryPaths(listOf(Recipient(second, "Recovery code"))) }
        val kekIds = runSuspending { a.engine.devices() }.map { it.kekId }
        assertTrue(second.kekId in kekIds && first.kekId !in kekIds, kekIds.toString())
    }

    /**
     * A pending create the server holds but that this device cannot adopt for a reason retrying does not cure (here
     * another device's vault, which opens for none of this device's keys) is forgotten once it failed, so that it does
     * not fail every sync from then on (the Swift SDK's aPendingCreateThatCannotBeAdoptedIsForgotten).
     */
    @Test
    fun aPendingCreateThatCannotBeAdoptedIsForgotten() {
        val a = TestProfile(clock, server, p256Keys())
        runSuspending { a.engine.createVault() }
        val b = TestProfile(clock, server, p256Keys())
        // Gives B a key; its own create meets A's vault.
        expectSyncFailure(SyncException.Code.SERVER) { runSuspending { b.engine.createVault() } }
        b.store.savePendingCreate(server.current!!.blob)
        expectSyncFailure(SyncException.Code.NO_ACCESS) { b.sync() }
        assertFalse(pendingCreateKept(b), "a pending create that can never be adopted is kept")
    }

    /** A profile (one attempt per request) whose create reached the server while its answer and its check were lost. */
    private fun profileWithACreateWhoseAnswerAndCheckWereLost(): TestProfile {
        val a = TestProfile(clock, server, p256Keys(), retryPolicy = RetryPolicy(maxAttempts = 1))
        server.saveAnswersLostNext = 1
        server.loadErrorsNext = 1
        expectSyncFailure(SyncException.Code.OFFLINE) { runSuspending { a.engine.createVault() } }
        return a
    }

    /** A retry that cannot ask the server about the earlier create fails, sends nothing, and keeps it for the next. */
    @Test
    fun aPendingCreateIsKeptWhileTheServerCannotBeAsked() {
        val a = profileWithACreateWhoseAnswerAndCheckWereLost()
        server.loadErrorsNext = 1
        expectSyncFailure(SyncException.Code.OFFLINE) { runSuspending { a.engine.createVault() } }
        assertEquals(1, server.saves.get(), "a create was sent before the earlier one was checked")
        assertTrue(pendingCreateKept(a))
        val report = runSuspending { a.engine.createVault() }
        assertTrue(report is SyncReport.Created, report.toString())
        assertEquals(server.versions.single().syncId, report.version)
    }

    /**
     * A pending create the server does not hold (its request never arrived, or has not yet: a client that gave up on a
     * slow server) is sent again as it was, not as a new vault, so whichever lands is this device's own; one where
     * another device's vault is stored gives way, and the create meets the conflict (the Swift SDK's
     * aPendingCreateTheServerDoesNotHoldIsSentAgainAsItWas).
     */
    @Test
    fun aPendingCreateTheServerDoesNotHoldIsSentAgainAsItWas() {
        val policy = RetryPolicy(maxAttempts = 2)
        val a = profileWhoseCreateNeverLanded()
        assertNull(server.current)
        val pending = a.store.pendingCreate()
        val report = runSuspending { a.engine.createVault() }
        assertTrue(report is SyncReport.Created, report.toString())
        assertEquals(server.current!!.syncId, report.version)
        assertTrue(pending != null && server.current!!.blob.contentEquals(pending), "a new vault was sealed instead of the pending one")
        val b = TestProfile(clock, server, p256Keys(), retryPolicy = policy)
        server.loadErrorsNext = 2
        expectSyncFailure(SyncException.Code.SERVER) { runSuspending { b.engine.createVault() } }
        val e = expectSyncFailure(SyncException.Code.SERVER) { runSuspending { b.engine.createVault() } }
        assertTrue(e.backupError is BackupError.Conflict, e.toString())
        assertEquals(1, server.saves.get())
        assertNull(b.engine.status().syncedVersion)
        assertNull(b.engine.anchor())
    }

    /**
     * A pending create the server did not hold when asked, whose first attempt lands just before the resend (a slow
     * proxy that let it through late): the resend meets that attempt's 409, and the vault is adopted as this device's
     * own, because the server holds exactly its bytes (the Swift SDK's
     * aResendOfAPendingCreateThatMeetsItsFirstAttemptAdoptsIt).
     */
    @Test
    fun aResendOfAPendingCreateThatMeetsItsFirstAttemptAdoptsIt() {
        val a = profileWhoseCreateNeverLanded()
        val pending = a.store.pendingCreate()!!
        assertNull(server.current, "the first attempt reached the server early")
        server.beforeSaveStored = {
            server.beforeSaveStored = null
            synchronized(server) { server.versions.add(FakeServer.Stored(pending, UtcTime.formatted(System.currentTimeMillis()))) }
        }
        val report = runSuspending { a.engine.createVault() }
        assertTrue(report is SyncReport.Created, report.toString())
        assertEquals(1, server.versions.size, "the resend stored a second vault")
        assertEquals(server.current!!.syncId, report.version)
        assertTrue(server.current!!.blob.contentEquals(pending), "the first attempt's bytes are not what the server holds")
        assertFalse(pendingCreateKept(a), "the adopted create is still pending")
        assertNotNull(a.engine.anchor())
        a.set("passport", "P-1")
        assertTrue(a.sync() is SyncReport.Pushed, "A cannot save over its own vault")
    }

    /**
     * A device whose own create never landed and that then joins another device's vault by pairing gives its pending
     * create up: its next sync is up to date, not a TAMPERED failure on the pending create (of another vault than the
     * one just pinned) as before (the Swift SDK's pairingIntoAnotherVaultGivesUpAPendingCreate).
     */
    @Test
    fun pairingIntoAnotherVaultGivesUpAPendingCreate() {
        val a = profileWhoseCreateNeverLanded()
        val b = TestProfile(clock, server, p256Keys())
        runSuspending { b.engine.createVault() }
        b.set("passport", "P-1")
        b.sync()
        val approved = runSuspending { b.engine.approve(PairingRequest.parse(a.engine.pairingRequest().encoded)) }
        assertTrue(runSuspending { a.engine.confirmPairing(approved.confirmationCode) } is SyncReport.Restored)
        assertFalse(pendingCreateKept(a), "the pending create is still kept")
        assertEquals("P-1", a.value("passport"))
        val report = a.sync()
        assertTrue(report is SyncReport.UpToDate || report is SyncReport.Pushed, report.toString())
    }

    /**
     * A P-256 profile making two attempts per request whose create never reached the server and whose check of what
     * the server stored failed too: the create stays pending on it.
     */
    private fun profileWhoseCreateNeverLanded(): TestProfile {
        val a = TestProfile(clock, server, p256Keys(), retryPolicy = RetryPolicy(maxAttempts = 2))
        // The session token first, so that the network errors below fall on the save.
        runSuspending { a.engine.history() }
        server.networkErrorsNext = 2
        server.loadErrorsNext = 2
        expectSyncFailure(SyncException.Code.OFFLINE) { runSuspending { a.engine.createVault() } }
        return a
    }

    /** An erasure forgets a pending create with the rest of the vault's files. */
    @Test
    fun erasingTheVaultForgetsAPendingCreate() {
        val store = LocalVaultStore(Files.createTempDirectory("wv-store").toFile(), SecretKeySpec(Crypto.randomBytes(32), "AES"))
        store.savePendingCreate(Crypto.randomBytes(64))
        assertNotNull(store.pendingCreate())
        store.eraseVault()
        assertNull(store.pendingCreate())
    }

    private fun pendingCreateKept(profile: TestProfile) = File(profile.directory, "${LocalVaultStore.PENDING_CREATE}.sealed").exists()

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
