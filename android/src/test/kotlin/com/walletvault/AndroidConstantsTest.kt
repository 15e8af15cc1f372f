package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.lang.reflect.Modifier

/**
 * Issue 27 point 2: the stubs the Android source set compiles against, and the library's mapping, agree with the
 * Android API reference. The numbers below are the reference's ("Constant Value"), written here once more on purpose:
 * a stub transcribed wrong, or a mapping constant that drifted, fails here.
 */
class AndroidConstantsTest {
    /** https://developer.android.com/reference/androidx/biometric/BiometricPrompt#constants */
    private val biometricPromptReference = mapOf(
        "ERROR_HW_UNAVAILABLE" to 1, "ERROR_UNABLE_TO_PROCESS" to 2, "ERROR_TIMEOUT" to 3, "ERROR_NO_SPACE" to 4,
        "ERROR_CANCELED" to 5, "ERROR_LOCKOUT" to 7, "ERROR_VENDOR" to 8, "ERROR_LOCKOUT_PERMANENT" to 9,
        "ERROR_USER_CANCELED" to 10, "ERROR_NO_BIOMETRICS" to 11, "ERROR_HW_NOT_PRESENT" to 12, "ERROR_NEGATIVE_BUTTON" to 13,
        "ERROR_NO_DEVICE_CREDENTIAL" to 14, "ERROR_SECURITY_UPDATE_REQUIRED" to 15)

    private fun intConstants(className: String): Map<String, Int> = Class.forName(className).declaredFields
        .filter { Modifier.isStatic(it.modifiers) && it.type == Int::class.javaPrimitiveType }
        .associate { Pair(it.name, it.getInt(null)) }

    @Test
    fun theMappingsPromptErrorCodesAreTheStubsAndTheReferences() {
        val mapping = intConstants(BiometricPromptErrors::class.java.name)
        val stub = intConstants("androidx.biometric.BiometricPrompt").filterKeys { it.startsWith("ERROR_") }
        assertEquals(biometricPromptReference, mapping, "BiometricPromptErrors against the reference")
        assertEquals(biometricPromptReference, stub, "the androidx.biometric.BiometricPrompt stub against the reference")
        // Every code the prompt can report has a meaning other than "unknown".
        for ((name, code) in biometricPromptReference)
            assertTrue(BiometricPromptErrors.vaultException(code).message!!.contains("unknown").not(), name)
    }

    @Test
    fun theKeystoreConstantsTheAdapterBuildsWithAreTheReferences() {
        // https://developer.android.com/reference/android/security/keystore/KeyProperties#constants
        assertEquals(1, android.security.keystore.KeyProperties.PURPOSE_ENCRYPT)
        assertEquals(2, android.security.keystore.KeyProperties.PURPOSE_DECRYPT)
        assertEquals(64, android.security.keystore.KeyProperties.PURPOSE_AGREE_KEY)
        assertEquals(1, android.security.keystore.KeyProperties.AUTH_DEVICE_CREDENTIAL)
        assertEquals(2, android.security.keystore.KeyProperties.AUTH_BIOMETRIC_STRONG)
        assertEquals("AES", android.security.keystore.KeyProperties.KEY_ALGORITHM_AES)
        assertEquals("EC", android.security.keystore.KeyProperties.KEY_ALGORITHM_EC)
        assertEquals("GCM", android.security.keystore.KeyProperties.BLOCK_MODE_GCM)
        assertEquals("NoPadding", android.security.keystore.KeyProperties.ENCRYPTION_PADDING_NONE)
        // https://developer.android.com/reference/android/content/pm/PackageManager#FEATURE_STRONGBOX_KEYSTORE
        assertEquals("android.hardware.strongbox_keystore", android.content.pm.PackageManager.FEATURE_STRONGBOX_KEYSTORE)
        // https://developer.android.com/reference/androidx/biometric/BiometricManager.Authenticators
        assertEquals(15, androidx.biometric.BiometricManager.Authenticators.BIOMETRIC_STRONG)
        assertEquals(255, androidx.biometric.BiometricManager.Authenticators.BIOMETRIC_WEAK)
        assertEquals(32768, androidx.biometric.BiometricManager.Authenticators.DEVICE_CREDENTIAL)
        // https://developer.android.com/reference/android/os/Build.VERSION_CODES
        assertEquals(listOf(28, 29, 30, 31, 33), listOf(android.os.Build.VERSION_CODES.P, android.os.Build.VERSION_CODES.Q,
            android.os.Build.VERSION_CODES.R, android.os.Build.VERSION_CODES.S, android.os.Build.VERSION_CODES.TIRAMISU))
        assertEquals(android.os.Build.VERSION_CODES.S, KeystoreDeviceKeys.AGREEMENT_MIN_SDK, "PURPOSE_AGREE_KEY is API 31")
    }

    @Test
    fun theAndroidExceptionsHaveTheReferencesSupertypes() {
        // What the adapter's translation relies on: a permanently invalidated key and a missing authentication are
        // InvalidKeyExceptions thrown by Cipher.init; StrongBoxUnavailableException is a ProviderException.
        assertTrue(java.security.InvalidKeyException::class.java.isAssignableFrom(android.security.keystore.KeyPermanentlyInvalidatedException::class.java))
        assertTrue(java.security.InvalidKeyException::class.java.isAssignableFrom(android.security.keystore.UserNotAuthenticatedException::class.java))
        assertTrue(java.security.ProviderException::class.java.isAssignableFrom(android.security.keystore.StrongBoxUnavailableException::class.java))
        assertEquals(Exception::class.java, android.security.KeyStoreException::class.java.superclass)
        assertTrue(androidx.fragment.app.FragmentActivity::class.java.let { android.content.Context::class.java.isAssignableFrom(it) })
    }
}
