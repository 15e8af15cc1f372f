package com.walletvault

/**
 * How the Android Keystore or BiometricPrompt refused, as the Android layer reports it (and as tests' fakes throw it):
 * the adapter translates each Android exception into one of these, and [vaultException] decides what it means for the
 * vault. Only [PermanentlyInvalidated], [KeyMissing] and a prompt's [BiometricPromptErrors.ERROR_NO_BIOMETRICS] say
 * the key is dead; every other failure leaves the key alone (the old rule, "any `InvalidKeyException` is a dead key",
 * sent a device with a Keystore hiccup into destructive recovery).
 */
public sealed class KeystoreFailure(message: String, cause: Throwable?) : Exception(message, cause) {
    /** `KeyPermanentlyInvalidatedException` (at `Cipher.init`): a biometric was enrolled or all were removed. */
    public class PermanentlyInvalidated(cause: Throwable? = null) : KeystoreFailure("the Keystore key was permanently invalidated", cause)

    /** `UserNotAuthenticatedException`: the key needs a (new) strong biometric authentication first. */
    public class NotAuthenticated(cause: Throwable? = null) : KeystoreFailure("the user has not authenticated for the Keystore key", cause)

    /**
     * `android.security.KeyStoreException` (API 33+, also as the cause of an `InvalidKeyException`): [transient] is
     * its `isTransientFailure()`, null below API 33, where the platform does not say; [numericErrorCode] its
     * `getNumericErrorCode()`.
     */
    public class KeyStoreError(public val transient: Boolean?, public val numericErrorCode: Int?, cause: Throwable? = null) :
        KeystoreFailure("the Keystore failed (error ${numericErrorCode ?: "unknown"}, ${when (transient) { true -> "transient"; false -> "not transient"; null -> "transience unknown" }})", cause)

    /** `StrongBoxUnavailableException` at generation: this StrongBox cannot hold the key. */
    public class StrongBoxUnavailable(cause: Throwable? = null) : KeystoreFailure("StrongBox cannot hold this key", cause)

    /** The alias is not in the AndroidKeyStore (the app's files came from a backup or another device). */
    public class KeyMissing(alias: String) : KeystoreFailure("the AndroidKeyStore has no key $alias", null)

    /** `BiometricPrompt.AuthenticationCallback.onAuthenticationError(errorCode, errString)`. */
    public class Prompt(public val errorCode: Int, message: String) : KeystoreFailure("the prompt ended with error $errorCode: $message", null)

    /** Any other exception of the Keystore (`InvalidKeyException` without a known cause, `ProviderException`, ...). */
    public class Other(cause: Throwable) : KeystoreFailure("the Keystore failed: ${cause.javaClass.simpleName}", cause)

    /** Whether trying the same operation again soon may succeed without the user doing anything (API 33+ says so). */
    public val isRetryable: Boolean get() = this is KeyStoreError && transient == true

    /**
     * What this failure means for the vault: [VaultException.Invalidated] (the key is dead: pair again or recover),
     * [VaultException.UserCanceled] (nothing changed; ask again later), [VaultException.KeyNotNow] (the key works but
     * not now: lockout, no sensor available, a transient Keystore failure), or [VaultException.KeyStorage] (the key is
     * left as it is).
     */
    public fun vaultException(): VaultException = when (this) {
        is PermanentlyInvalidated -> VaultException.Invalidated("this device's Keystore key was permanently invalidated (a biometric was enrolled or removed)", this)
        is KeyMissing -> VaultException.Invalidated("this device's Keystore key is gone (the app's files were restored from a backup or another device)", this)
        is NotAuthenticated -> VaultException.KeyNotNow("the Keystore saw no strong biometric authentication for this key; authenticate again", this)
        is KeyStoreError ->
            if (transient == true) VaultException.KeyNotNow("the Keystore is temporarily unavailable (error ${numericErrorCode ?: "unknown"}); try again", this)
            else VaultException.KeyStorage("the Keystore failed (error ${numericErrorCode ?: "unknown"}); the key is left as it is", this)
        is StrongBoxUnavailable -> VaultException.KeyStorage("neither StrongBox nor the plain Keystore could create the key", this)
        is Prompt -> BiometricPromptErrors.vaultException(errorCode, this)
        is Other -> VaultException.KeyStorage("the Keystore failed (${cause?.javaClass?.simpleName}); the key is left as it is", this)
    }
}

/**
 * The error codes of `androidx.biometric.BiometricPrompt` (the values of its `ERROR_*` constants, from
 * https://developer.android.com/reference/androidx/biometric/BiometricPrompt), and what each means for the vault.
 * `AndroidConstantsTest` checks them against the stubs and the reference.
 */
public object BiometricPromptErrors {
    /** The hardware is unavailable; try again later. */
    public const val ERROR_HW_UNAVAILABLE: Int = 1
    /** The sensor could not process the current image. */
    public const val ERROR_UNABLE_TO_PROCESS: Int = 2
    /** The prompt timed out. */
    public const val ERROR_TIMEOUT: Int = 3
    /** Not enough storage to complete the operation. */
    public const val ERROR_NO_SPACE: Int = 4
    /** The operation was canceled because the sensor is unavailable (another app, the screen turned off, ...). */
    public const val ERROR_CANCELED: Int = 5
    /** Too many attempts; locked out for a while. */
    public const val ERROR_LOCKOUT: Int = 7
    /** A vendor-specific error. */
    public const val ERROR_VENDOR: Int = 8
    /** Too many lockouts; biometrics are off until the device is unlocked with its PIN, pattern or password. */
    public const val ERROR_LOCKOUT_PERMANENT: Int = 9
    /** The user canceled (back, a tap outside the prompt). */
    public const val ERROR_USER_CANCELED: Int = 10
    /** No biometric is enrolled. */
    public const val ERROR_NO_BIOMETRICS: Int = 11
    /** The device has no biometric sensor. */
    public const val ERROR_HW_NOT_PRESENT: Int = 12
    /** The user pressed the negative button. */
    public const val ERROR_NEGATIVE_BUTTON: Int = 13
    /** The device has no PIN, pattern or password. */
    public const val ERROR_NO_DEVICE_CREDENTIAL: Int = 14
    /** A security vulnerability was found in the sensor; it cannot be used until updated. */
    public const val ERROR_SECURITY_UPDATE_REQUIRED: Int = 15

    /**
     * The vault's reading of a prompt error: the user's cancels are [VaultException.UserCanceled]; no biometric left
     * enrolled is [VaultException.Invalidated] (Android invalidates a key made with
     * `setInvalidatedByBiometricEnrollment(true)` once every biometric is removed); a lockout, no sensor, a timeout,
     * a required update and the sensor's own failures are [VaultException.KeyNotNow] (the key is intact, try later);
     * a code this table does not know is [VaultException.KeyStorage].
     */
    public fun vaultException(errorCode: Int, cause: Throwable? = null): VaultException = when (errorCode) {
        ERROR_USER_CANCELED, ERROR_NEGATIVE_BUTTON, ERROR_CANCELED ->
            VaultException.UserCanceled("the prompt to unlock this device's key was cancelled", cause)
        ERROR_NO_BIOMETRICS ->
            VaultException.Invalidated("no strong biometric is enrolled any more, so this device's key was invalidated", cause)
        ERROR_LOCKOUT -> VaultException.KeyNotNow("too many attempts: biometrics are locked for a while; try again later", cause)
        ERROR_LOCKOUT_PERMANENT ->
            VaultException.KeyNotNow("biometrics are locked: unlock the device with its PIN, pattern or password, then try again", cause)
        ERROR_HW_UNAVAILABLE, ERROR_HW_NOT_PRESENT, ERROR_SECURITY_UPDATE_REQUIRED, ERROR_NO_DEVICE_CREDENTIAL ->
            VaultException.KeyNotNow("no strong biometric sensor can be used now (error $errorCode)", cause)
        ERROR_TIMEOUT, ERROR_UNABLE_TO_PROCESS, ERROR_NO_SPACE, ERROR_VENDOR ->
            VaultException.KeyNotNow("the biometric prompt failed (error $errorCode); try again", cause)
        else -> VaultException.KeyStorage("the biometric prompt failed with an unknown error $errorCode", cause)
    }
}
