package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.net.UnknownHostException
import javax.crypto.Cipher

/**
 * Issue 27 point 9: what the Swift `VaultSyncEngine` offers, the Kotlin one offers too: history, restoring a kept
 * version as new content, erasing the account, `authenticationCanceled`, `removedFromVault`; and an app's OIDC token
 * source failing offline is offline, not signed out.
 */
class ParityTest {
    private val clock = FakeClock()
    private val server = FakeServer()

    /** Device keys whose prompt the user can cancel: the authenticator then throws [VaultException.UserCanceled]. */
    private class CancellablePromptKeys : DeviceKeyStore {
        @Volatile var cancelPrompt = false
        private var kek: KeystoreKek? = null
        override fun current(): KeyEncryptionKey? = kek
        override suspend fun create(): KeyEncryptionKey {
            val keystore = FakeKeystore()
            val prompt = FakePrompt { cipher ->
                if (cancelPrompt) throw VaultException.UserCanceled("the biometric prompt was cancelled")
                cipher
            }
            return KeystoreKek(keystore, keystore.importAes(InvalidatableKey(Crypto.randomBytes(32))), KeystoreKek.newKekId(), prompt)
                .also { kek = it }
        }
    }

    /** A phone that created the vault with passport P-1 and a tablet profile sharing its device key, both synced. */
    private fun phoneAndTablet(keys: DeviceKeyStore = TestDeviceKeys()): Pair<TestProfile, TestProfile> {
        val phone = TestProfile(clock, server, keys)
        val tablet = TestProfile(clock, server, keys)
        runSuspending { phone.engine.createVault() }
        phone.set("passport", "P-1")
        phone.sync()
        assertTrue(tablet.sync() is SyncReport.Restored)
        return Pair(phone, tablet)
    }

    @Test
    fun historyListsTheKeptVersionsNewestFirst() {
        val phone = TestProfile(clock, server)
        runSuspending { phone.engine.createVault() }
        phone.set("passport", "P-1")
        phone.sync()
        assertEquals(server.versions.map { it.syncId }.reversed(), runSuspending { phone.engine.history() }.map { it.syncId })
        assertEquals(2, server.versions.size)
    }

    @Test
    fun restoringAVersionSavesItsContentAsTheNewestChanges() {
        val (phone, tablet) = phoneAndTablet()
        val first = server.current!!.syncId
        phone.set("passport", "P-2")
        phone.set("licence", "L-2")
        phone.sync()
        tablet.sync()
        clock.now += 60_000
        val report = runSuspending { phone.engine.restoreVersion(first) }
        assertEquals(first, report.restoredFrom)
        assertEquals(server.current!!.syncId, report.version)
        assertEquals("P-1", phone.value("passport"))
        assertNull(phone.value("licence"), "an item the version lacks is deleted")
        // Written as changes made now, so that every device takes them as the newest content.
        val document = phone.engine.document()!!
        assertEquals(clock.now, document.items["passport"]!!.modifiedAt)
        assertEquals(clock.now, document.items["licence"]!!.modifiedAt)
        assertTrue(document.items["licence"]!!.isDeleted)
        assertTrue(tablet.sync() is SyncReport.Restored)
        assertEquals("P-1", tablet.value("passport"))
        assertNull(tablet.value("licence"))
        expectSyncFailure(SyncException.Code.SERVER) { runSuspending { phone.engine.restoreVersion("2001-01-01T00:00:00.000Z") } }
    }

    /**
     * A sync that finds no vault on the server (404) and none on this device is `NO_VAULT`, as Swift's `.noVault`
     * (VaultSyncEngine.syncRound): before, Kotlin reported `UpToDate("")`, so an app told a new phone, or one whose
     * account was erased, that it was in step with a vault that does not exist.
     */
    @Test
    fun aSyncWithNoVaultOnTheServerNorHereIsNoVault() {
        val fresh = TestProfile(clock, server)
        expectSyncFailure(SyncException.Code.NO_VAULT) { fresh.sync() }
        assertNull(fresh.engine.document(), "the failed sync made a working copy")
        assertEquals(0, server.saves.get(), "the failed sync saved something")
        // After this device erased the account it has no copy either: the next sync says so too.
        val (phone, _) = phoneAndTablet()
        runSuspending { phone.engine.eraseAccount() }
        expectSyncFailure(SyncException.Code.NO_VAULT) { phone.sync() }
        assertTrue(runSuspending { phone.engine.createVault() } is SyncReport.Created, "creating is still open")
    }

    @Test
    fun erasingTheAccountEmptiesTheServerAndThisDeviceWhichCanCreateAgain() {
        val (phone, tablet) = phoneAndTablet()
        val keys = phone.keys
        // A failed erasure changes nothing here.
        server.failNext = 100
        expectSyncFailure(SyncException.Code.SERVER) { runSuspending { phone.engine.eraseAccount() } }
        server.failNext = 0
        assertEquals("P-1", phone.value("passport"))
        runSuspending { phone.engine.eraseAccount() }
        assertEquals(1, server.erasures.get())
        assertTrue(server.versions.isEmpty())
        assertNull(phone.engine.document())
        assertNull(phone.engine.status().syncedVersion)
        expectSyncFailure(SyncException.Code.NO_VAULT) { tablet.sync() }
        // The erased vault's counter and anchor are forgotten: a new vault is not taken for a rollback or another vault.
        assertTrue(runSuspending { phone.engine.createVault() } is SyncReport.Created)
        phone.set("licence", "L-1")
        assertTrue(phone.sync() is SyncReport.Pushed)
        assertTrue(TestProfile(clock, server, keys).sync() is SyncReport.Restored)
    }

    @Test
    fun aCancelledPromptIsAuthenticationCanceledAndChangesNothing() {
        val keys = CancellablePromptKeys()
        val (phone, tablet) = phoneAndTablet(keys)
        tablet.set("passport", "P-2")
        tablet.sync()
        keys.cancelPrompt = true
        val before = phone.engine.status().syncedVersion
        expectSyncFailure(SyncException.Code.AUTHENTICATION_CANCELED) { phone.sync() }
        assertEquals(before, phone.engine.status().syncedVersion)
        keys.cancelPrompt = false
        assertTrue(phone.sync() is SyncReport.Restored)
        assertEquals("P-2", phone.value("passport"))
    }

    @Test
    fun aRevokedDeviceIsRemovedFromVaultAndNamesTheWriter() {
        // A member whose key another member can re-wrap for (P-256), so the revocation rotates the DEK past it.
        val owner = TestProfile(clock, server, RecoveryRotationTest.P256DeviceKeys())
        val code = RecoveryCode.generate()
        runSuspending { owner.engine.createVault(listOf(Recipient(RecoveryCodeKek(code), "Recovery code"))) }
        val other = TestProfile(clock, server, RecoveryRotationTest.P256DeviceKeys())
        runSuspending { other.engine.recover(RecoveryCodeKek(code)) }
        owner.sync()
        val removed = other.keys.current()!!.kekId
        assertTrue(runSuspending { owner.engine.revoke(removed) } is SyncReport.Rotated)
        val failure = expectSyncFailure(SyncException.Code.REMOVED_FROM_VAULT) { other.sync() }
        assertTrue(failure.message!!.contains("by \"phone\""), failure.message)
        // A device that never was a member is not "removed": it has no access.
        expectSyncFailure(SyncException.Code.NO_ACCESS) { TestProfile(clock, server, RecoveryRotationTest.P256DeviceKeys()).sync() }
    }

    @Test
    fun anOfflineTokenSourceIsOfflineAndARefusedOneSignedOut() {
        val phone = TestProfile(clock, server)
        runSuspending { phone.engine.createVault() }
        fun failingWith(failure: Exception) = TestProfile(clock, server, phone.keys, accessToken = { throw failure })
        val offline = expectSyncFailure(SyncException.Code.OFFLINE) { failingWith(UnknownHostException("issuer.example")).sync() }
        assertTrue(offline.backupError is BackupError.Transport, offline.toString())
        // AppAuth reports a network failure as its own exception with the IOException as cause.
        expectSyncFailure(SyncException.Code.OFFLINE) { failingWith(IllegalStateException("token refresh failed", java.io.IOException("timeout"))).sync() }
        val signedOut = expectSyncFailure(SyncException.Code.SERVER) { failingWith(IllegalStateException("refresh token revoked")).sync() }
        assertTrue(signedOut.backupError is BackupError.Unauthorized, signedOut.toString())
        // No answer from the server at all after the retries is offline too.
        server.networkErrorsNext = 100
        expectSyncFailure(SyncException.Code.OFFLINE) { phone.sync() }
    }
}
