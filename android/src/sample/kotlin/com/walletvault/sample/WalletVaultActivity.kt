package com.walletvault.sample

import android.os.Bundle
import androidx.fragment.app.FragmentActivity
import com.walletvault.android.BiometricPromptAuthenticator

/** One prompt per activity, created in onCreate and handed to the ViewModel. */
abstract class WalletVaultActivity : FragmentActivity() {
    /** The activity's ViewModel (from your ViewModelProvider.Factory, or Hilt). */
    abstract val vault: WalletVaultViewModel

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        vault.attach(BiometricPromptAuthenticator(this, title = "Unlock your wallet vault", negativeButtonText = "Cancel"))
    }

    override fun onDestroy() {
        vault.detach()
        super.onDestroy()
    }
}
