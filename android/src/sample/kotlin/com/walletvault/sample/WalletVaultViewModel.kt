package com.walletvault.sample

import android.content.Context
import android.os.Build
import androidx.lifecycle.ViewModel
import androidx.lifecycle.viewModelScope
import com.walletvault.BackupClient
import com.walletvault.ConflictContext
import com.walletvault.ConflictResolution
import com.walletvault.LocalVaultStore
import com.walletvault.RecoveryCode
import com.walletvault.RecoveryCodeKek
import com.walletvault.Recipient
import com.walletvault.SessionTokenProvider
import com.walletvault.SyncException
import com.walletvault.SyncReport
import com.walletvault.UserAuthenticator
import com.walletvault.VaultSyncEngine
import com.walletvault.android.AndroidVaultStorage
import com.walletvault.changes
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import javax.crypto.Cipher

/** What the screen shows; one value per outcome the app must handle. */
sealed class VaultScreenState {
    object Idle : VaultScreenState()
    class Synced(val report: SyncReport) : VaultScreenState()
    class ShowRecoveryCodeOnce(val formatted: String) : VaultScreenState()
    class Message(val text: String, val offerPairOrRecover: Boolean = false) : VaultScreenState()
}

/**
 * The engine lives in a ViewModel (it outlives rotations); the prompt belongs to the activity, which attaches it in
 * onCreate and detaches it in onDestroy.
 */
class WalletVaultViewModel(context: Context, serverUrl: String, oidcAccessToken: suspend () -> String) : ViewModel() {
    private var prompt: UserAuthenticator? = null
    private val promptOfTheCurrentActivity = object : UserAuthenticator {
        override suspend fun authenticate(cipher: Cipher?): Cipher? =
            (prompt ?: throw SyncException(SyncException.Code.NOT_NOW, "no activity on screen to show the prompt")).authenticate(cipher)
    }

    private val store: LocalVaultStore = AndroidVaultStorage.localStore(context)
    private val tokens = SessionTokenProvider(serverUrl, oidcAccessToken)
    val engine = VaultSyncEngine(store, BackupClient(serverUrl, tokens),
        AndroidVaultStorage.deviceKeys(context, promptOfTheCurrentActivity, store), deviceLabel = Build.MODEL,
        conflictHandler = { conflict -> askTheUser(conflict) })

    var state: VaultScreenState = if (store.clearedStateSealedElsewhere)
        VaultScreenState.Message("This vault was set up on another phone. Pair this phone or use your recovery code.", offerPairOrRecover = true)
    else VaultScreenState.Idle
        private set

    fun attach(prompt: UserAuthenticator) { this.prompt = prompt }
    fun detach() { prompt = null }

    fun createVault() = viewModelScope.launch {
        val code = RecoveryCode.generate()
        run { engine.createVault(listOf(Recipient(RecoveryCodeKek(code), "Recovery code"))) }
        state = VaultScreenState.ShowRecoveryCodeOnce(code.formatted)
    }

    fun sync() = viewModelScope.launch { run { engine.sync() } }

    /** Other devices' saves, as they arrive, while the job runs: the activity starts it in onStart, cancels it in onStop. */
    fun watchChanges(): Job = viewModelScope.launch {
        try {
            engine.changes { report -> state = VaultScreenState.Synced(report) }
        } catch (e: SyncException) {
            state = messageFor(e)   // what retrying cannot cure; network failures and 429 are waited out inside
        }
    }

    fun recover(typedCode: String) = viewModelScope.launch { run { engine.recover(RecoveryCodeKek(RecoveryCode.parse(typedCode))) } }

    private suspend fun run(call: suspend () -> SyncReport) {
        state = try {
            VaultScreenState.Synced(call())
        } catch (e: SyncException) {
            messageFor(e)
        }
    }

    private fun messageFor(e: SyncException): VaultScreenState.Message = when (e.code) {
        SyncException.Code.KEY_INVALIDATED ->
            VaultScreenState.Message("Your fingerprints or face changed, so this phone's key was reset. Pair it again or use your recovery code.", true)
        SyncException.Code.NO_ACCESS ->
            VaultScreenState.Message("This phone is not (or no longer) in your vault. Pair it from another device or use your recovery code.", true)
        SyncException.Code.REMOVED_FROM_VAULT ->   // the message names the device that removed it, as the vault states it
            VaultScreenState.Message("Another device removed this phone from your vault. Pair it again or use your recovery code.", true)
        SyncException.Code.AUTHENTICATION_CANCELED -> VaultScreenState.Message("Unlock cancelled. Nothing changed.")
        SyncException.Code.NOT_NOW -> VaultScreenState.Message("Can't unlock right now (${e.message}). Try again in a moment.")
        SyncException.Code.CONFIRMATION_REQUIRED -> VaultScreenState.Message("Type the six-digit code shown on your other device.")
        SyncException.Code.CONFIRMATION_MISMATCH -> VaultScreenState.Message("That code does not match. Check it on your other device.")
        SyncException.Code.ROLLBACK_DETECTED, SyncException.Code.FORK_DETECTED, SyncException.Code.TAMPERED ->
            VaultScreenState.Message("The server sent a vault this phone cannot trust. Your local copy is unchanged.")
        SyncException.Code.TOO_LARGE -> VaultScreenState.Message("The vault is over 1 MB. Move large files out of it.")
        SyncException.Code.UNRESOLVED_CONFLICT -> VaultScreenState.Message("Changed here and elsewhere: choose which to keep.")
        SyncException.Code.NO_VAULT -> VaultScreenState.Message("No vault yet: create one or pair this phone.", true)
        SyncException.Code.OFFLINE -> VaultScreenState.Message("No connection to the server. Your changes stay on this phone.")
        SyncException.Code.SERVER -> VaultScreenState.Message("The server did not take the request. Your changes stay on this phone.")
        else -> VaultScreenState.Message("Something went wrong: ${e.message}")   // LOCAL_STORAGE, INVALID_INPUT
    }

    // Show the dialog; here the sample keeps this device's changes.
    private suspend fun askTheUser(conflict: ConflictContext): ConflictResolution = ConflictResolution.KEEP_LOCAL
}
