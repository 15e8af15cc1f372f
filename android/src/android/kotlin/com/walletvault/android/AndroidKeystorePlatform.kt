package com.walletvault.android

import android.content.Context
import android.content.pm.PackageManager
import android.os.Build
import android.security.keystore.KeyGenParameterSpec
import android.security.keystore.KeyPermanentlyInvalidatedException
import android.security.keystore.KeyProperties
import android.security.keystore.StrongBoxUnavailableException
import android.security.keystore.UserNotAuthenticatedException
import com.walletvault.KeystoreFailure
import com.walletvault.KeystoreKeySpec
import com.walletvault.KeystorePlatform
import java.security.KeyPairGenerator
import java.security.KeyStore
import java.security.PrivateKey
import java.security.interfaces.ECPublicKey
import java.security.spec.ECGenParameterSpec
import javax.crypto.Cipher
import javax.crypto.KeyAgreement
import javax.crypto.KeyGenerator
import javax.crypto.SecretKey
import javax.crypto.spec.GCMParameterSpec

/**
 * [KeystorePlatform] over the AndroidKeyStore: a thin translation, every decision is [com.walletvault.KeystoreDeviceKeys]'s.
 * Each call's Android exceptions become [KeystoreFailure]s in [failureOf].
 */
public class AndroidKeystorePlatform(context: Context) : KeystorePlatform {
    private val packageManager = context.applicationContext.packageManager
    private val keyStore: KeyStore by lazy { KeyStore.getInstance(PROVIDER).apply { load(null) } }

    override val sdkInt: Int get() = Build.VERSION.SDK_INT

    override fun hasStrongBox(): Boolean =
        Build.VERSION.SDK_INT >= Build.VERSION_CODES.P && packageManager.hasSystemFeature(PackageManager.FEATURE_STRONGBOX_KEYSTORE)

    override fun containsAlias(alias: String): Boolean = translated { keyStore.containsAlias(alias) }

    override fun deleteAlias(alias: String): Unit = translated { if (keyStore.containsAlias(alias)) keyStore.deleteEntry(alias) }

    override fun generate(spec: KeystoreKeySpec): ByteArray? = translated {
        val purposes = when (spec.kind) {
            KeystoreKeySpec.Kind.AES_256_GCM -> KeyProperties.PURPOSE_ENCRYPT or KeyProperties.PURPOSE_DECRYPT
            KeystoreKeySpec.Kind.EC_P256_AGREEMENT -> KeyProperties.PURPOSE_AGREE_KEY
        }
        val builder = KeyGenParameterSpec.Builder(spec.alias, purposes)
            .setUserAuthenticationRequired(true)
            .setInvalidatedByBiometricEnrollment(spec.invalidatedByBiometricEnrollment)
        if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.R) {
            builder.setUserAuthenticationParameters(spec.authenticationTimeoutSeconds, KeyProperties.AUTH_BIOMETRIC_STRONG)
        } else {
            // Before API 30, -1 is "every use needs its own authentication" (a CryptoObject prompt), what 0 means from 30.
            @Suppress("DEPRECATION")
            builder.setUserAuthenticationValidityDurationSeconds(if (spec.authenticationTimeoutSeconds == 0) -1 else spec.authenticationTimeoutSeconds)
        }
        if (spec.strongBox) builder.setIsStrongBoxBacked(true)
        when (spec.kind) {
            KeystoreKeySpec.Kind.AES_256_GCM -> {
                builder.setBlockModes(KeyProperties.BLOCK_MODE_GCM).setEncryptionPaddings(KeyProperties.ENCRYPTION_PADDING_NONE).setKeySize(256)
                KeyGenerator.getInstance(KeyProperties.KEY_ALGORITHM_AES, PROVIDER).run { init(builder.build()); generateKey() }
                null
            }
            KeystoreKeySpec.Kind.EC_P256_AGREEMENT -> {
                builder.setAlgorithmParameterSpec(ECGenParameterSpec("secp256r1"))
                val pair = KeyPairGenerator.getInstance(KeyProperties.KEY_ALGORITHM_EC, PROVIDER).run { initialize(builder.build()); generateKeyPair() }
                val point = (pair.public as ECPublicKey).w
                fixed32(point.affineX.toByteArray()) + fixed32(point.affineY.toByteArray())
            }
        }
    }

    override fun initCipher(alias: String, encrypt: Boolean, iv: ByteArray?): Cipher = translated {
        val key = keyStore.getKey(alias, null) as? SecretKey ?: throw KeystoreFailure.KeyMissing(alias)
        Cipher.getInstance("AES/GCM/NoPadding").apply {
            // "Caller-provided IV not permitted" when encrypting: the Keystore chooses it.
            if (encrypt) init(Cipher.ENCRYPT_MODE, key) else init(Cipher.DECRYPT_MODE, key, GCMParameterSpec(128, iv))
        }
    }

    override fun agree(alias: String, peer: ECPublicKey): ByteArray = translated {
        val key = keyStore.getKey(alias, null) as? PrivateKey ?: throw KeystoreFailure.KeyMissing(alias)
        KeyAgreement.getInstance("ECDH", PROVIDER).run { init(key); doPhase(peer, true); generateSecret() }
    }

    override fun failureOf(exception: Exception): KeystoreFailure {
        var cause: Throwable? = exception
        while (cause != null) {
            when (cause) {
                is KeystoreFailure -> return cause
                is KeyPermanentlyInvalidatedException -> return KeystoreFailure.PermanentlyInvalidated(exception)
                is UserNotAuthenticatedException -> return KeystoreFailure.NotAuthenticated(exception)
                is StrongBoxUnavailableException -> return KeystoreFailure.StrongBoxUnavailable(exception)
            }
            if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.TIRAMISU && cause is android.security.KeyStoreException)
                return KeystoreFailure.KeyStoreError(cause.isTransientFailure, cause.numericErrorCode, exception)
            cause = cause.cause
        }
        return KeystoreFailure.Other(exception)
    }

    private inline fun <T> translated(body: () -> T): T = try { body() } catch (e: KeystoreFailure) { throw e } catch (e: Exception) { throw failureOf(e) }

    private fun fixed32(unsigned: ByteArray): ByteArray {
        val trimmed = if (unsigned.size > 32) unsigned.copyOfRange(unsigned.size - 32, unsigned.size) else unsigned
        return ByteArray(32 - trimmed.size) + trimmed
    }

    private companion object {
        const val PROVIDER = "AndroidKeyStore"
    }
}
