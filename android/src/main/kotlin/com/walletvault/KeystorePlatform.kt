package com.walletvault

import java.security.interfaces.ECPublicKey
import javax.crypto.Cipher

/**
 * The Android Keystore as the library needs it: the seam between the plain-Kotlin decisions ([KeystoreDeviceKeys],
 * [KeystoreKek]) and the Android source set's `AndroidKeystorePlatform`, which only translates these calls into
 * `KeyGenParameterSpec`, `KeyStore`, `Cipher` and `KeyAgreement` calls. JVM tests implement it with a fake that fails
 * the way Android documents.
 *
 * Every method throws [KeystoreFailure] (and nothing else) when the Keystore refuses; the adapter translates the
 * Android exceptions (`KeyPermanentlyInvalidatedException`, `UserNotAuthenticatedException`,
 * `android.security.KeyStoreException`, `StrongBoxUnavailableException`) into it.
 */
public interface KeystorePlatform {
    /** `Build.VERSION.SDK_INT` of the device. */
    public val sdkInt: Int

    /** `PackageManager.hasSystemFeature(FEATURE_STRONGBOX_KEYSTORE)`: whether a StrongBox Keymaster exists. */
    public fun hasStrongBox(): Boolean

    /** Whether the AndroidKeyStore holds a key under [alias] (absent after a restore onto another device). */
    public fun containsAlias(alias: String): Boolean

    /** Deletes the key under [alias], if any. Throws [KeystoreFailure]. */
    public fun deleteAlias(alias: String)

    /**
     * Generates the key [spec] describes. Returns the raw public point `X ‖ Y` (64 bytes) of an
     * [KeystoreKeySpec.Kind.EC_P256_AGREEMENT] key, and null for an AES key.
     * Throws [KeystoreFailure.StrongBoxUnavailable] when StrongBox was asked for and cannot hold it.
     */
    public fun generate(spec: KeystoreKeySpec): ByteArray?

    /**
     * An `AES/GCM/NoPadding` cipher initialised with the AES key under [alias]: for encryption without an IV (the
     * Keystore chooses it; read `cipher.iv` afterwards), for decryption with `GCMParameterSpec(128, iv)`.
     * Throws [KeystoreFailure] (`KeyPermanentlyInvalidatedException` is thrown here, at `Cipher.init`).
     */
    public fun initCipher(alias: String, encrypt: Boolean, iv: ByteArray?): Cipher

    /**
     * ECDH (`KeyAgreement` "ECDH" in the AndroidKeyStore) of the EC key under [alias] with [peer]: the shared secret
     * Z, 32 bytes. Throws [KeystoreFailure].
     */
    public fun agree(alias: String, peer: ECPublicKey): ByteArray

    /**
     * The failure an exception of an authenticated cipher's `doFinal` stands for (the same translation as the other
     * calls: an `IllegalBlockSizeException` caused by an `android.security.KeyStoreException`, say).
     */
    public fun failureOf(exception: Exception): KeystoreFailure
}

/**
 * The BiometricPrompt, as the library needs it. The Android source set's `BiometricPromptAuthenticator` shows the
 * androidx prompt with `BIOMETRIC_STRONG` only; tests fake it.
 */
public interface UserAuthenticator {
    /**
     * Shows the prompt. With a [cipher], the prompt carries it (`BiometricPrompt.CryptoObject`) and the authenticated
     * cipher is returned; without one (a time-bound key, such as the EC agreement key), returns null once a strong
     * biometric authenticated the user. Throws [KeystoreFailure.Prompt] with the prompt's error code.
     */
    public suspend fun authenticate(cipher: Cipher?): Cipher?
}

/** A key the Android layer must generate; every choice in it is made in plain Kotlin ([KeystoreDeviceKeys.specFor]). */
public class KeystoreKeySpec(
    /** The AndroidKeyStore alias. */
    public val alias: String,
    /** Which key. */
    public val kind: Kind,
    /** `setIsStrongBoxBacked(true)`. */
    public val strongBox: Boolean,
    /**
     * The first argument of `setUserAuthenticationParameters(timeout, AUTH_BIOMETRIC_STRONG)` (API 30+): 0 = every use
     * needs its own prompt, bound through a `CryptoObject`. Below API 30 a timeout of 0 becomes
     * `setUserAuthenticationValidityDurationSeconds(-1)`, the same per-use rule.
     */
    public val authenticationTimeoutSeconds: Int
) {
    /** The two keys the library generates. */
    public enum class Kind {
        /** The seed's §3 key: AES-256, GCM, no padding, encrypt and decrypt. */
        AES_256_GCM,
        /** A P-256 key with `PURPOSE_AGREE_KEY` (API 31+), the private half of an `ECDH-ES+A256KW` entry. */
        EC_P256_AGREEMENT
    }

    /** Always true: a key whose enrollment changed must die with it (set explicitly, it is the default on Android). */
    public val invalidatedByBiometricEnrollment: Boolean get() = true

    /** The same key in the plain Keystore (the fallback when StrongBox is unavailable). */
    public fun withoutStrongBox(): KeystoreKeySpec = KeystoreKeySpec(alias, kind, false, authenticationTimeoutSeconds)
}

/** Where a device key lives, recorded at generation and shown by [VaultSyncEngine.devices]. */
public enum class KeyStorageLevel {
    /** A StrongBox Keymaster (a separate secure chip). */
    STRONGBOX,
    /** The AndroidKeyStore in the trusted execution environment (StrongBox absent or unavailable). */
    TRUSTED_ENVIRONMENT,
    /** A software key in this process (the JVM's [SoftwareDeviceKeys]). */
    SOFTWARE
}
