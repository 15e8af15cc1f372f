package com.walletvault.android

import android.content.Context
import android.security.keystore.KeyGenParameterSpec
import android.security.keystore.KeyProperties
import com.walletvault.KeystoreDeviceKeys
import com.walletvault.LocalVaultStore
import com.walletvault.UserAuthenticator
import java.io.File
import java.security.KeyStore
import javax.crypto.KeyGenerator
import javax.crypto.SecretKey

/**
 * Where the library keeps its state on Android, and this device's keys.
 *
 * The state lives in `noBackupFilesDir/walletvault`, which Auto Backup and device-to-device transfer never copy (the
 * shipped `backup_rules.xml` and `data_extraction_rules.xml` exclude the older places too), sealed under an
 * AndroidKeyStore AES key without user authentication, so background syncs can read the local copy. Should files
 * sealed elsewhere arrive anyway, [LocalVaultStore.clearedStateSealedElsewhere] says so and the device starts as a new
 * one.
 */
public object AndroidVaultStorage {
    /** The at-rest key's alias. */
    public const val AT_REST_ALIAS: String = "walletvault-at-rest"

    /** The library's directory: `noBackupFilesDir/walletvault`. */
    public fun directory(context: Context): File = File(context.applicationContext.noBackupFilesDir, "walletvault")

    /** The local store in [directory], sealed under the at-rest Keystore key (created on first use). */
    public fun localStore(context: Context): LocalVaultStore = LocalVaultStore(directory(context), atRestKey())

    /** This device's keys ([KeystoreDeviceKeys] over the AndroidKeyStore), their record kept in [store]. */
    public fun deviceKeys(context: Context, authenticator: UserAuthenticator, store: LocalVaultStore): KeystoreDeviceKeys =
        KeystoreDeviceKeys(AndroidKeystorePlatform(context), authenticator, store)

    private fun atRestKey(): SecretKey {
        val keyStore = KeyStore.getInstance("AndroidKeyStore").apply { load(null) }
        (keyStore.getKey(AT_REST_ALIAS, null) as? SecretKey)?.let { return it }
        val spec = KeyGenParameterSpec.Builder(AT_REST_ALIAS, KeyProperties.PURPOSE_ENCRYPT or KeyProperties.PURPOSE_DECRYPT)
            .setBlockModes(KeyProperties.BLOCK_MODE_GCM)
            .setEncryptionPaddings(KeyProperties.ENCRYPTION_PADDING_NONE)
            .setKeySize(256)
            .build()
        return KeyGenerator.getInstance(KeyProperties.KEY_ALGORITHM_AES, "AndroidKeyStore").run { init(spec); generateKey() }
    }
}
