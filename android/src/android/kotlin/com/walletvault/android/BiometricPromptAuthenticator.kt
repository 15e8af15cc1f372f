package com.walletvault.android

import androidx.biometric.BiometricManager
import androidx.biometric.BiometricPrompt
import androidx.core.content.ContextCompat
import androidx.fragment.app.FragmentActivity
import com.walletvault.BiometricPromptErrors
import com.walletvault.KeystoreFailure
import com.walletvault.UserAuthenticator
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withContext
import javax.crypto.Cipher
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException

/**
 * The androidx BiometricPrompt as [UserAuthenticator]: `BIOMETRIC_STRONG` only, with the cipher in a `CryptoObject`
 * when there is one. Create it once per activity, in `onCreate` (the prompt then survives configuration changes, as
 * the androidx documentation asks); a cancelled coroutine calls `cancelAuthentication()`.
 * Errors become [KeystoreFailure.Prompt] with the prompt's code, which the library maps.
 */
public class BiometricPromptAuthenticator(
    activity: FragmentActivity,
    private val title: CharSequence,
    private val negativeButtonText: CharSequence
) : UserAuthenticator {
    // Touched on the main thread only: the prompt's callbacks run on the main executor.
    private var pending: CancellableContinuation<Cipher?>? = null

    private val prompt = BiometricPrompt(activity, ContextCompat.getMainExecutor(activity), object : BiometricPrompt.AuthenticationCallback() {
        override fun onAuthenticationSucceeded(result: BiometricPrompt.AuthenticationResult) {
            finish()?.resume(result.cryptoObject?.cipher)
        }

        override fun onAuthenticationError(errorCode: Int, errString: CharSequence) {
            finish()?.resumeWithException(KeystoreFailure.Prompt(errorCode, errString.toString()))
        }
        // onAuthenticationFailed (a finger not recognised) is not the end: the prompt stays up for another try.
    })

    private fun finish(): CancellableContinuation<Cipher?>? = pending.also { pending = null }

    override suspend fun authenticate(cipher: Cipher?): Cipher? = withContext(Dispatchers.Main) {
        suspendCancellableCoroutine<Cipher?> { continuation ->
            pending?.let { finish()?.resumeWithException(KeystoreFailure.Prompt(BiometricPromptErrors.ERROR_CANCELED, "replaced by a new prompt")) }
            pending = continuation
            continuation.invokeOnCancellation { prompt.cancelAuthentication() }
            val info = BiometricPrompt.PromptInfo.Builder()
                .setTitle(title)
                .setNegativeButtonText(negativeButtonText)
                .setAllowedAuthenticators(BiometricManager.Authenticators.BIOMETRIC_STRONG)
                .build()
            if (cipher != null) prompt.authenticate(info, BiometricPrompt.CryptoObject(cipher)) else prompt.authenticate(info)
        }
    }
}
