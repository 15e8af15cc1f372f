package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import java.nio.file.Files
import javax.crypto.spec.SecretKeySpec

/**
 * Issue 27 points 1 and 3: every Keystore and BiometricPrompt outcome, through [FakeKeystore] and [FakePrompt] failing
 * the way Android documents, mapped to the library's errors by [KeystoreDeviceKeys] and [KeystoreFailure].
 */
class KeystoreOutcomeTest {
    private fun store() = LocalVaultStore(Files.createTempDirectory("wv-ks").toFile(), SecretKeySpec(Crypto.randomBytes(32), "AES"))

    private class Phone(val keystore: FakeKeystore, val prompt: FakePrompt = FakePrompt(), val store: LocalVaultStore) {
        val keys = KeystoreDeviceKeys(keystore, prompt, store)
    }

    private fun phone(sdk: Int, strongBox: Boolean = false) = Phone(FakeKeystore(sdk, strongBox), store = store())

    /** A DEK wrapped to the phone's key, and the entry. */
    private fun entry(kek: KeyEncryptionKey): Pair<ByteArray, WrappedKey> {
        val dek = Crypto.randomBytes(32)
        return Pair(dek, runSuspending { kek.wrap(dek) })
    }

    private inline fun <reified E : VaultException> unwrapFails(kek: KeyEncryptionKey, entry: WrappedKey): E =
        TestSupport.expectThrows<E> { runSuspending { kek.unwrap(entry) } }

    @Test
    fun theKeysAreTheSeedsOnEveryApiLevel() {
        val aes = KeystoreDeviceKeys.specFor(30, true, "a")
        assertEquals(KeystoreKeySpec.Kind.AES_256_GCM, aes.kind)
        assertEquals(0, aes.authenticationTimeoutSeconds, "the seed's timeout 0: every use is its own CryptoObject prompt")
        assertTrue(aes.strongBox)
        assertTrue(aes.invalidatedByBiometricEnrollment)
        assertFalse(KeystoreDeviceKeys.specFor(30, false, "a").strongBox, "no FEATURE_STRONGBOX_KEYSTORE: the plain Keystore")
        val ec = KeystoreDeviceKeys.specFor(31, true, "b")
        assertEquals(KeystoreKeySpec.Kind.EC_P256_AGREEMENT, ec.kind)
        assertEquals(KeystoreDeviceKeys.AGREEMENT_AUTHENTICATION_SECONDS, ec.authenticationTimeoutSeconds)
        assertTrue(ec.invalidatedByBiometricEnrollment)
    }

    @Test
    fun bothKindsWrapToAPublicKeyAndUnwrapOnlyThroughThePrompt() {
        for (sdk in listOf(28, 30, 31, 35)) {
            val p = phone(sdk)
            val kek = runSuspending { p.keys.create() }
            assertEquals("ECDH-ES+A256KW", kek.alg)
            assertTrue(kek.canWrapWithoutHolder, "another member wraps to it during a rotation")
            val created = p.prompt.prompts
            val (dek, wrapped) = entry(kek)
            assertEquals(created, p.prompt.prompts, "wrapping needs no prompt")
            TestSupport.assertBytes(dek, runSuspending { p.keys.current()!!.unwrap(wrapped) })
            assertEquals(created + 1, p.prompt.prompts)
            // Below 31 the sealed scalar is opened inside the CryptoObject; from 31 the prompt has none (KeyAgreement).
            assertEquals(if (sdk >= 31) 0 else 2, p.prompt.withCryptoObject, "sdk $sdk")
            assertEquals(if (sdk >= 31) 1 else 0, p.keystore.calls[FakeKeystore.Operation.AGREE] ?: 0)
        }
    }

    @Test
    fun keyPermanentlyInvalidatedAtInitIsADeadKey() {
        for (sdk in listOf(29, 33)) {
            val p = phone(sdk)
            val kek = runSuspending { p.keys.create() }
            val (_, wrapped) = entry(kek)
            p.keystore.invalidateAll()
            unwrapFails<VaultException.Invalidated>(kek, wrapped)
        }
    }

    @Test
    fun userNotAuthenticatedIsNotNowNeverADeadKey() {
        val p = phone(29)
        val kek = runSuspending { p.keys.create() }
        val (dek, wrapped) = entry(kek)
        p.keystore.failNext(FakeKeystore.Operation.INIT_CIPHER, KeystoreFailure.NotAuthenticated())
        unwrapFails<VaultException.KeyNotNow>(kek, wrapped)
        TestSupport.assertBytes(dek, runSuspending { kek.unwrap(wrapped) })
    }

    @Test
    fun aTransientKeystoreFailureIsRetriedThenNotNowNeverADeadKey() {
        for ((sdk, operation) in listOf(Pair(33, FakeKeystore.Operation.AGREE), Pair(29, FakeKeystore.Operation.INIT_CIPHER))) {
            val p = phone(sdk)
            val kek = runSuspending { p.keys.create() }
            val (dek, wrapped) = entry(kek)
            // KeyStoreException.isTransientFailure() == true (API 33+): retried, and the second retry succeeds.
            p.keystore.failNext(operation, KeystoreFailure.KeyStoreError(true, 4), times = KeystoreKek.KEYSTORE_ATTEMPTS - 1)
            val before = p.keystore.calls[operation] ?: 0
            TestSupport.assertBytes(dek, runSuspending { kek.unwrap(wrapped) })
            assertEquals(before + KeystoreKek.KEYSTORE_ATTEMPTS, p.keystore.calls[operation])
            // Still failing after every attempt: unavailable now, the key left alone.
            p.keystore.failNext(operation, KeystoreFailure.KeyStoreError(true, 4), times = KeystoreKek.KEYSTORE_ATTEMPTS)
            unwrapFails<VaultException.KeyNotNow>(kek, wrapped)
            assertNotNull(p.keys.current(), "the key is kept")
            TestSupport.assertBytes(dek, runSuspending { kek.unwrap(wrapped) })
        }
    }

    @Test
    fun aPermanentOrUnknownKeystoreFailureIsReportedNotRetriedAndTheKeyKept() {
        for (failure in listOf(KeystoreFailure.KeyStoreError(false, 10), KeystoreFailure.KeyStoreError(null, null),
                               KeystoreFailure.Other(java.security.InvalidKeyException("Keystore operation failed")))) {
            val p = phone(29)
            val kek = runSuspending { p.keys.create() }
            val (dek, wrapped) = entry(kek)
            p.keystore.failNext(FakeKeystore.Operation.INIT_CIPHER, failure)
            val before = p.keystore.calls[FakeKeystore.Operation.INIT_CIPHER] ?: 0
            val e = unwrapFails<VaultException.KeyStorage>(kek, wrapped)
            assertEquals("keyStorage", e.code)
            assertEquals(before + 1, p.keystore.calls[FakeKeystore.Operation.INIT_CIPHER], "not retried: the platform did not call it transient")
            TestSupport.assertBytes(dek, runSuspending { kek.unwrap(wrapped) })
        }
    }

    @Test
    fun theSeedsAesKeyReadsATransientFailureTheSameWay() {
        val keystore = FakeKeystore(33)
        val alias = keystore.importAes(SecretKeySpec(Crypto.randomBytes(32), "AES"))
        val kek = KeystoreKek(keystore, alias, KeystoreKek.newKekId(), FakePrompt())
        val (dek, wrapped) = entry(kek)
        keystore.failNext(FakeKeystore.Operation.INIT_CIPHER, KeystoreFailure.KeyStoreError(true, 4))
        TestSupport.assertBytes(dek, runSuspending { kek.unwrap(wrapped) })
        keystore.failNext(FakeKeystore.Operation.INIT_CIPHER, KeystoreFailure.KeyStoreError(true, 4), times = KeystoreKek.KEYSTORE_ATTEMPTS)
        unwrapFails<VaultException.KeyNotNow>(kek, wrapped)
    }

    @Test
    fun strongBoxIsUsedWhenPresentAndFallsBackWhenUnavailableRecordingTheChoice() {
        val withStrongBox = phone(33, strongBox = true)
        runSuspending { withStrongBox.keys.create() }
        assertEquals(KeyStorageLevel.STRONGBOX, withStrongBox.keys.storageLevel())
        assertTrue(withStrongBox.keystore.generated.single().strongBox)

        // StrongBoxUnavailableException at generation: the same key in the plain Keystore, recorded as such.
        val refusing = phone(29, strongBox = true).also { it.keystore.strongBoxRefuses = true }
        val kek = runSuspending { refusing.keys.create() }
        assertEquals(listOf(false), refusing.keystore.generated.map { it.strongBox })
        assertEquals(KeyStorageLevel.TRUSTED_ENVIRONMENT, refusing.keys.storageLevel())
        val (dek, wrapped) = entry(kek)
        TestSupport.assertBytes(dek, runSuspending { kek.unwrap(wrapped) })

        val none = phone(33, strongBox = false)
        runSuspending { none.keys.create() }
        assertEquals(listOf(false), none.keystore.generated.map { it.strongBox }, "no StrongBox feature: not even tried")
        assertEquals(KeyStorageLevel.TRUSTED_ENVIRONMENT, none.keys.storageLevel())
    }

    @Test
    fun aUserCancelChangesNothing() {
        val p = phone(33)
        val kek = runSuspending { p.keys.create() }
        val (dek, wrapped) = entry(kek)
        p.prompt.failNext(KeystoreFailure.Prompt(BiometricPromptErrors.ERROR_USER_CANCELED, "Cancel"))
        assertEquals("userCanceled", unwrapFails<VaultException.UserCanceled>(kek, wrapped).code)
        TestSupport.assertBytes(dek, runSuspending { kek.unwrap(wrapped) })
    }

    @Test
    fun everyPromptErrorHasItsMeaning() {
        val expected = mapOf(
            BiometricPromptErrors.ERROR_USER_CANCELED to VaultException.UserCanceled::class.java,
            BiometricPromptErrors.ERROR_NEGATIVE_BUTTON to VaultException.UserCanceled::class.java,
            BiometricPromptErrors.ERROR_CANCELED to VaultException.UserCanceled::class.java,
            BiometricPromptErrors.ERROR_LOCKOUT to VaultException.KeyNotNow::class.java,
            BiometricPromptErrors.ERROR_LOCKOUT_PERMANENT to VaultException.KeyNotNow::class.java,
            BiometricPromptErrors.ERROR_NO_BIOMETRICS to VaultException.Invalidated::class.java,
            BiometricPromptErrors.ERROR_HW_UNAVAILABLE to VaultException.KeyNotNow::class.java,
            BiometricPromptErrors.ERROR_HW_NOT_PRESENT to VaultException.KeyNotNow::class.java,
            BiometricPromptErrors.ERROR_NO_DEVICE_CREDENTIAL to VaultException.KeyNotNow::class.java,
            BiometricPromptErrors.ERROR_SECURITY_UPDATE_REQUIRED to VaultException.KeyNotNow::class.java,
            BiometricPromptErrors.ERROR_TIMEOUT to VaultException.KeyNotNow::class.java,
            BiometricPromptErrors.ERROR_UNABLE_TO_PROCESS to VaultException.KeyNotNow::class.java,
            BiometricPromptErrors.ERROR_NO_SPACE to VaultException.KeyNotNow::class.java,
            BiometricPromptErrors.ERROR_VENDOR to VaultException.KeyNotNow::class.java,
            99 to VaultException.KeyStorage::class.java)
        for ((code, type) in expected) {
            val p = phone(33)
            val kek = runSuspending { p.keys.create() }
            val (_, wrapped) = entry(kek)
            p.prompt.failNext(KeystoreFailure.Prompt(code, "message"))
            try { runSuspending { kek.unwrap(wrapped) }; fail<Unit>("code $code did not fail") } catch (e: VaultException) {
                assertEquals(type, e.javaClass, "prompt error $code: ${e.message}")
            }
        }
    }

    @Test
    fun aRecordWhoseKeyTheKeystoreNoLongerHoldsIsAnInvalidatedKey() {
        // Files restored onto another phone never get here (LocalVaultStore clears them: their at-rest key is not
        // there); on this phone the Keystore deleted the key (screen lock removed), so its vault entry is dead.
        val p = phone(33)
        val kek = runSuspending { p.keys.create() }
        p.keystore.forgetAll()
        TestSupport.expectThrows<VaultException.Invalidated> { p.keys.current() }
        assertEquals(kek.kekId, p.keys.lastKekId(), "the dead key's entry can still be named")
        assertNotNull(p.store.read(KeystoreDeviceKeys.RECORD))
        val fresh = runSuspending { p.keys.create() }
        assertEquals(fresh.kekId, p.keys.current()?.kekId)
    }

    @Test
    fun aKeystoreThatCannotSayWhetherItHoldsTheKeyKeepsTheRecord() {
        val p = phone(33)
        val kek = runSuspending { p.keys.create() }
        val (dek, wrapped) = entry(kek)
        p.keystore.failNext(FakeKeystore.Operation.CONTAINS, KeystoreFailure.KeyStoreError(true, 4))
        assertEquals(kek.kekId, p.keys.current()?.kekId, "a failed lookup is no evidence that the key is gone")
        TestSupport.assertBytes(dek, runSuspending { p.keys.current()!!.unwrap(wrapped) })
    }
}
