package com.walletvault.sample

import android.os.Bundle
import androidx.fragment.app.FragmentActivity
import com.walletvault.android.BiometricPromptAuthenticator
import kotlinx.coroutines.Job

/** One prompt per activity, created in onCreate and handed to the ViewModel; other devices' saves while it is started. */
abstract class WalletVaultActivity : FragmentActivity() {
    /** The activity's ViewModel (from your ViewModelProvider.Factory, or Hilt). */
    abstract val vault: WalletVaultViewModel
    private var watching: Job? = null

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        vault.attach(BiometricPromptAuthenticator(this, title = "Unlock your wallet vault", negativeButtonText = "Cancel"))
    }

    override fun onStart() {
        super.onStart()
        watching = vault.watchChanges()
    }

    override fun onStop() {
        // The long-poll ends with the job: no connection is held for a wallet that is not on screen.
        watching?.cancel()
        super.onStop()
    }

    override fun onDestroy() {
        vault.detach()
        super.onDestroy()
    }
}
