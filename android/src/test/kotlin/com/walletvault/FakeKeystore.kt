package com.walletvault

import java.security.KeyPair
import java.security.interfaces.ECPublicKey
import java.util.ArrayDeque
import javax.crypto.Cipher
import javax.crypto.SecretKey
import javax.crypto.spec.GCMParameterSpec
import javax.crypto.spec.SecretKeySpec

/**
 * The AndroidKeyStore as a JVM fake that fails the way Android documents: [invalidate] makes `Cipher.init` (and
 * `KeyAgreement.init`) throw what `KeyPermanentlyInvalidatedException` becomes, [failNext] queues a failure for the
 * next call of one operation (a transient `KeyStoreException`, `UserNotAuthenticatedException`, ...), and
 * [strongBoxRefuses] makes a StrongBox generation throw `StrongBoxUnavailableException`.
 */
class FakeKeystore(override val sdkInt: Int = 33, private val strongBox: Boolean = false) : KeystorePlatform {
    enum class Operation { CONTAINS, GENERATE, INIT_CIPHER, AGREE }

    private val aesKeys = HashMap<String, SecretKey>()
    private val ecKeys = HashMap<String, KeyPair>()
    private val invalidated = HashSet<String>()
    private val failures = HashMap<Operation, ArrayDeque<KeystoreFailure>>()
    val generated = ArrayList<KeystoreKeySpec>()
    val calls = HashMap<Operation, Int>()
    var strongBoxRefuses = false

    override fun hasStrongBox(): Boolean = strongBox
    override fun containsAlias(alias: String): Boolean { call(Operation.CONTAINS); return alias in aesKeys || alias in ecKeys }
    override fun deleteAlias(alias: String) { aesKeys.remove(alias); ecKeys.remove(alias) }

    /** Queues [failure] for the next call of [operation]. */
    fun failNext(operation: Operation, failure: KeystoreFailure, times: Int = 1) {
        repeat(times) { failures.getOrPut(operation) { ArrayDeque() }.addLast(failure) }
    }

    /** What a biometric enrollment does to every auth-bound key. */
    fun invalidateAll() { invalidated.addAll(aesKeys.keys); invalidated.addAll(ecKeys.keys) }

    /** A restore onto another device: the files stay, the keys do not. */
    fun forgetAll() { aesKeys.clear(); ecKeys.clear() }

    /** An AES key the test holds (a vector's key), under a new alias. */
    fun importAes(key: SecretKey): String = "imported-${aesKeys.size}".also { aesKeys[it] = key }

    private fun call(operation: Operation) {
        calls[operation] = (calls[operation] ?: 0) + 1
        failures[operation]?.pollFirst()?.let { throw it }
    }

    override fun generate(spec: KeystoreKeySpec): ByteArray? {
        call(Operation.GENERATE)
        if (spec.strongBox && (strongBoxRefuses || !strongBox)) throw KeystoreFailure.StrongBoxUnavailable()
        generated.add(spec)
        return when (spec.kind) {
            KeystoreKeySpec.Kind.AES_256_GCM -> { aesKeys[spec.alias] = SecretKeySpec(Crypto.randomBytes(32), "AES"); null }
            KeystoreKeySpec.Kind.EC_P256_AGREEMENT -> {
                val pair = Crypto.p256Generate()
                ecKeys[spec.alias] = pair
                Crypto.rawPoint(pair.public as ECPublicKey)
            }
        }
    }

    override fun initCipher(alias: String, encrypt: Boolean, iv: ByteArray?): Cipher {
        call(Operation.INIT_CIPHER)
        val key = aesKeys[alias] ?: throw KeystoreFailure.KeyMissing(alias)
        if (alias in invalidated || (key is InvalidatableKey && key.isGone)) throw KeystoreFailure.PermanentlyInvalidated()
        return Cipher.getInstance("AES/GCM/NoPadding").also {
            if (encrypt) it.init(Cipher.ENCRYPT_MODE, key) else it.init(Cipher.DECRYPT_MODE, key, GCMParameterSpec(128, iv))
        }
    }

    override fun agree(alias: String, peer: ECPublicKey): ByteArray {
        call(Operation.AGREE)
        val pair = ecKeys[alias] ?: throw KeystoreFailure.KeyMissing(alias)
        if (alias in invalidated) throw KeystoreFailure.PermanentlyInvalidated()
        return Crypto.ecdh(pair.private, peer)
    }

    override fun failureOf(exception: Exception): KeystoreFailure = KeystoreFailure.Other(exception)

    companion object {
        /** A [KeystoreKek] over [key] in a fresh fake, prompting through [prompt]. */
        fun kek(key: SecretKey, kekId: String, prompt: suspend (Cipher) -> Cipher): KeystoreKek {
            val keystore = FakeKeystore()
            return KeystoreKek(keystore, keystore.importAes(key), kekId, FakePrompt(prompt))
        }
    }
}

/** A BiometricPrompt that succeeds (handing back the cipher) unless a failure was queued with [failNext]. */
class FakePrompt(private val onCipher: suspend (Cipher) -> Cipher = { it }) : UserAuthenticator {
    private val failures = ArrayDeque<KeystoreFailure>()
    var prompts = 0
    var withCryptoObject = 0

    fun failNext(failure: KeystoreFailure) { failures.addLast(failure) }

    override suspend fun authenticate(cipher: Cipher?): Cipher? {
        prompts++
        failures.pollFirst()?.let { throw it }
        if (cipher == null) return null
        withCryptoObject++
        return onCipher(cipher)
    }
}
