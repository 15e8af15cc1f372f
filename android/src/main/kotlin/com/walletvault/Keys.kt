package com.walletvault

import java.security.GeneralSecurityException
import java.security.KeyFactory
import java.security.PrivateKey
import java.security.interfaces.ECPublicKey
import java.security.interfaces.RSAPrivateCrtKey
import java.security.spec.PKCS8EncodedKeySpec
import java.security.spec.RSAPublicKeySpec
import javax.crypto.AEADBadTagException
import javax.crypto.Cipher

/** Something that can wrap a DEK into an entry: a key-encryption key, or only the public half of one. */
interface KeyWrapping {
    /** The `kek_id` written into entries (FORMAT.md §6): stable, revealing nothing secret. */
    val kekId: String
    /** The `alg` of entries this key writes. */
    val alg: String
    /** Whether wrapping works without the holder (no prompt); DEK rotation re-wraps only these unattended. */
    val canWrapWithoutHolder: Boolean

    /** Wraps [dek] (a 32-byte DEK, or the 56-byte payload [WrapBinding] makes); label and creation time are stamped by the sealer. */
    suspend fun wrap(dek: ByteArray): WrappedKey
}

/** A key whose holder can also unwrap. */
interface KeyEncryptionKey : KeyWrapping {
    /** Unwraps what an entry whose `kek_id` is this key's wraps (a DEK or a bound payload, [WrapBinding]); `unwrapFailed`, `invalidated` or `keyStorage` otherwise. */
    suspend fun unwrap(entry: WrappedKey): ByteArray
}

/** `base64url(HMAC(K, "WalletVault-v1 kek_id")[0..<16])` (§6). */
fun symmetricKekId(key: ByteArray): String = Base64Url.encode(Crypto.hmac(key, Crypto.utf8("WalletVault-v1 kek_id")).copyOf(16))

private fun mismatch(entry: WrappedKey, expected: String) =
    VaultException.UnwrapFailed("entry is ${entry.scheme.alg ?: "seed-form"}, this key unwraps $expected")

/** The A256KW core shared by stored keys, recovery codes and passphrases. */
open class A256kwKek internal constructor(private val key: ByteArray, private val source: Scheme) : KeyEncryptionKey {
    init { require(key.size == 32) { "A256KW keys are 32 bytes" } }
    final override val kekId: String = symmetricKekId(key)
    override val alg: String get() = "A256KW"
    override val canWrapWithoutHolder: Boolean get() = true

    override suspend fun wrap(dek: ByteArray): WrappedKey = WrappedKey(kekId, Crypto.aesKeyWrap(key, dek), source)

    override suspend fun unwrap(entry: WrappedKey): ByteArray {
        val s = entry.scheme
        val matches = when (source) {
            is Scheme.A256kwStored -> s is Scheme.A256kwStored || s is Scheme.Seed
            is Scheme.A256kwRecoveryCode -> s is Scheme.A256kwRecoveryCode
            is Scheme.A256kwPassphrase -> s is Scheme.A256kwPassphrase
            else -> false
        }
        if (!matches) throw mismatch(entry, "A256KW")
        return Crypto.aesKeyUnwrap(key, entry.dekCipher, "A256KW")
    }
}

/** A stored random 256-bit `A256KW` key (the Swift `SymmetricKEK`'s key, without the file). */
class StoredKeyKek(key: ByteArray) : A256kwKek(key, Scheme.A256kwStored) {
    companion object { fun generate() = StoredKeyKek(Crypto.randomBytes(32)) }
}

/** A recovery code as key-encryption key (§7.4). */
class RecoveryCodeKek(code: RecoveryCode) : A256kwKek(
    Crypto.hkdf(code.canonicalBytes(), ByteArray(0), Crypto.utf8("WalletVault-v1 recovery code A256KW"), 32), Scheme.A256kwRecoveryCode)

/**
 * A passphrase as key-encryption key: Argon2id with the entry's salt and costs (§7.3), over the passphrase in
 * Unicode NFC (`java.text.Normalizer`), so composed and decomposed accents from different keyboards give one key.
 */
class PassphraseKek private constructor(key: ByteArray, val salt: ByteArray, val costs: Argon2Costs) :
    A256kwKek(key, Scheme.A256kwPassphrase(salt, costs)) {
    companion object {
        /**
         * A new entry's key: fresh 16-byte salt, the default costs, the passphrase in NFC. Runs Argon2id on the calling
         * thread. Refuses costs no reader would derive (`weakParameters`, `workLimitExceeded`).
         */
        fun create(passphrase: String, costs: Argon2Costs = Argon2Costs.DEFAULT): PassphraseKek {
            Argon2Costs.checkOpenBudget(listOf(costs))
            return derived(normalized(passphrase), Crypto.randomBytes(16), costs)
        }

        /** The key for one entry's salt and costs, from the passphrase in NFC; costs outside the limits are refused first. */
        fun derive(passphrase: String, salt: ByteArray, costs: Argon2Costs): PassphraseKek {
            // Checked before deriving: a server could lower the costs to cheapen guessing, or raise them to exhaust us.
            Argon2Costs.checkOpenBudget(listOf(costs))
            return derived(normalized(passphrase), salt, costs)
        }

        /**
         * The key of the passphrase entry of [envelope] whose `kek_id` the passphrase reproduces. Every passphrase
         * entry's costs, their number and total work are checked before the first derivation; entries are tried in
         * blob order with the passphrase in NFC, then (only if it is not already NFC) as given, for entries enrolled
         * before passphrases were normalized.
         */
        fun unlock(passphrase: String, envelope: VaultEnvelope): PassphraseKek {
            val candidates = envelope.entries.mapNotNull { entry -> (entry.scheme as? Scheme.A256kwPassphrase)?.let { Pair(entry.kekId, it) } }
            Argon2Costs.checkOpenBudget(candidates.map { it.second.costs })
            val nfc = normalized(passphrase)
            val asGiven = Crypto.utf8(passphrase)
            for (password in if (nfc.contentEquals(asGiven)) listOf(nfc) else listOf(nfc, asGiven)) {
                for ((kekId, scheme) in candidates) {
                    val candidate = derived(password, scheme.salt, scheme.costs)
                    if (candidate.kekId == kekId) return candidate
                }
            }
            throw VaultException.NoMatchingKey("no passphrase entry matches this passphrase")
        }

        /** The UTF-8 bytes of [passphrase] in Unicode Normalization Form C, what Argon2id derives from. */
        fun normalized(passphrase: String): ByteArray = Crypto.utf8(java.text.Normalizer.normalize(passphrase, java.text.Normalizer.Form.NFC))

        private fun derived(password: ByteArray, salt: ByteArray, costs: Argon2Costs) =
            PassphraseKek(Argon2id.derive(password, salt, costs), salt, costs)
    }
}

/** The IV and `ciphertext ‖ tag` of an `A256GCMKW` entry or of the seed's Android layout, for either AES-GCM key. */
private fun gcmWrapParts(entry: WrappedKey): Pair<ByteArray, ByteArray> = when (val s = entry.scheme) {
    is Scheme.A256gcmkw -> Pair(s.iv, entry.dekCipher + s.tag)
    is Scheme.Seed -> seedLayout(entry.dekCipher)
    else -> throw mismatch(entry, "A256GCMKW")
}

/** Splits a seed-layout `dek_cipher`: iv ‖ ciphertext ‖ tag, 60 bytes (a DEK) or 84 (a bound payload). */
private fun seedLayout(dekCipher: ByteArray): Pair<ByteArray, ByteArray> {
    if (dekCipher.size != 60 && dekCipher.size != 84) throw VaultException.UnwrapFailed("dek_cipher is not a 60- or 84-byte AES-GCM IV ‖ ciphertext ‖ tag")
    return Pair(dekCipher.copyOfRange(0, 12), dekCipher.copyOfRange(12, dekCipher.size))
}

/** An `A256GCMKW` entry from a GCM output (`ciphertext ‖ tag`) over [payload]. */
private fun gcmEntry(kekId: String, iv: ByteArray, sealed: ByteArray, payload: ByteArray): WrappedKey {
    if (iv.size != 12 || sealed.size != payload.size + 16) throw VaultException.CryptoFailure("the cipher is not AES-GCM with a 12-byte IV and 16-byte tag")
    return WrappedKey(kekId, sealed.copyOfRange(0, payload.size), Scheme.A256gcmkw(iv, sealed.copyOfRange(payload.size, sealed.size)))
}

/** A software AES-256-GCM key-encryption key (`A256GCMKW`, and the seed's Android layout); see [KeystoreKek] for Android. */
class AesGcmKek(private val key: ByteArray, kekId: String? = null) : KeyEncryptionKey {
    override val kekId: String = kekId ?: symmetricKekId(key)
    override val alg: String get() = "A256GCMKW"
    override val canWrapWithoutHolder: Boolean get() = true

    override suspend fun wrap(dek: ByteArray): WrappedKey {
        val (iv, sealed) = Crypto.gcmSeal(key, dek, null)
        return gcmEntry(kekId, iv, sealed, dek)
    }

    /** The seed's Android layout: `wrapIv ‖ doFinal(dek)`. */
    fun wrapSeedLayout(dek: ByteArray): WrappedKey {
        val (iv, sealed) = Crypto.gcmSeal(key, dek, null)
        return WrappedKey(kekId, iv + sealed, Scheme.Seed)
    }

    override suspend fun unwrap(entry: WrappedKey): ByteArray {
        val (iv, sealed) = gcmWrapParts(entry)
        val dek = Crypto.gcmOpen(key, iv, sealed, null) ?: throw VaultException.UnwrapFailed("AES-GCM key wrap: the key does not unwrap this entry")
        return Crypto.checkedPayload(dek, "A256GCMKW")
    }
}

/**
 * The seed's §3 key-encryption key: an AndroidKeyStore AES-256-GCM key under [alias], used through a cipher the
 * prompt authenticates (`BiometricPrompt.CryptoObject`); its entries are `A256GCMKW` (or the seed's layout). Only its
 * holder can wrap to it, so another member's DEK rotation drops it: new Android devices get a P-256 entry instead
 * ([KeystoreDeviceKeys]); this key still opens the vaults of devices enrolled with it.
 *
 * The library never sees key bytes. On encryption the IV is the one the Keystore chose (`cipher.iv` after `init`;
 * a caller-provided IV is not permitted there); on decryption it is passed as `GCMParameterSpec`. [kekId] must be
 * unique per device (not the constant alias): see [KeystoreKek.newKekId].
 *
 * Failures are read by [KeystoreFailure.vaultException]: only a permanently invalidated key is
 * [VaultException.Invalidated]; a transient Keystore failure before the prompt is retried
 * ([KEYSTORE_ATTEMPTS] calls in all), then reported as [VaultException.KeyNotNow], never as a dead key.
 */
public class KeystoreKek(
    private val platform: KeystorePlatform,
    private val alias: String,
    override val kekId: String,
    private val authenticator: UserAuthenticator
) : KeyEncryptionKey {
    override val alg: String get() = "A256GCMKW"
    /** Every use of a biometric-gated Keystore key needs its holder. */
    override val canWrapWithoutHolder: Boolean get() = false

    private suspend fun run(encrypt: Boolean, iv: ByteArray?, input: ByteArray): Pair<ByteArray, ByteArray> {
        val cipher = keystoreCall { platform.initCipher(alias, encrypt, iv) }
        val authenticated = prompted(authenticator, cipher)
        val output = finishing(platform) { authenticated.doFinal(input) }
        return Pair(authenticated.iv ?: throw VaultException.CryptoFailure("the Keystore chose no IV"), output)
    }

    override suspend fun wrap(dek: ByteArray): WrappedKey {
        val (iv, sealed) = run(true, null, dek)
        return gcmEntry(kekId, iv, sealed, dek)
    }

    /** The seed's Android layout, `dek_cipher = wrapIv ‖ wrapCipher.doFinal(dek)`, for seed-form blobs. */
    public suspend fun wrapSeedLayout(dek: ByteArray): WrappedKey {
        val (iv, sealed) = run(true, null, dek)
        return WrappedKey(kekId, iv + sealed, Scheme.Seed)
    }

    override suspend fun unwrap(entry: WrappedKey): ByteArray {
        val (iv, sealed) = gcmWrapParts(entry)
        return Crypto.checkedPayload(run(false, iv, sealed).second, "A256GCMKW")
    }

    public companion object {
        /** How many times a Keystore call that failed transiently (API 33+ `isTransientFailure()`) is made in all. */
        public const val KEYSTORE_ATTEMPTS: Int = 3

        /** A fresh `kek_id` for a new Keystore key: unique per device and key, nothing secret. */
        public fun newKekId(): String = "android-" + Base64Url.encode(Crypto.randomBytes(16))
    }
}

/**
 * Runs a Keystore call made before or without a prompt, again while it fails transiently (at most
 * [KeystoreKek.KEYSTORE_ATTEMPTS] calls); throws the [VaultException] its last failure means.
 */
internal inline fun <T> keystoreCall(body: () -> T): T {
    var attempt = 1
    while (true) {
        try {
            return body()
        } catch (failure: KeystoreFailure) {
            if (!failure.isRetryable || attempt >= KeystoreKek.KEYSTORE_ATTEMPTS) throw failure.vaultException()
            attempt++
        }
    }
}

/** The prompt over [cipher] (`CryptoObject`): the authenticated cipher; a refusal becomes the [VaultException] it means. */
internal suspend fun prompted(authenticator: UserAuthenticator, cipher: Cipher): Cipher =
    promptedBare(authenticator, cipher) ?: throw VaultException.KeyStorage("the prompt returned no authenticated cipher")

/** The prompt without a crypto object when [cipher] is null (a time-bound key); a refusal becomes its [VaultException]. */
internal suspend fun promptedBare(authenticator: UserAuthenticator, cipher: Cipher?): Cipher? = try {
    authenticator.authenticate(cipher)
} catch (failure: KeystoreFailure) {
    throw failure.vaultException()
}

/**
 * `doFinal` of an authenticated Keystore cipher: a wrong tag is [VaultException.UnwrapFailed]; anything else the
 * platform reads ([KeystorePlatform.failureOf]) and is reported, not retried (a retry would need another prompt).
 */
internal inline fun finishing(platform: KeystorePlatform, body: () -> ByteArray): ByteArray = try {
    body()
} catch (e: AEADBadTagException) {
    throw VaultException.UnwrapFailed("the Keystore key does not unwrap this entry")
} catch (e: GeneralSecurityException) {
    throw platform.failureOf(e).vaultException()
} catch (e: IllegalStateException) {
    throw platform.failureOf(e).vaultException()
}

/** `ECDH-ES+A256KW` unwrapping (§7.2) with the private half behind [agree]: a software key, or a Keystore key. */
internal suspend fun ecdhEsUnwrap(entry: WrappedKey, agree: suspend (ECPublicKey) -> ByteArray): ByteArray {
    val s = entry.scheme as? Scheme.EcdhEsA256kw ?: throw mismatch(entry, "ECDH-ES+A256KW")
    val epk = Crypto.p256PublicKey(s.ephemeral.x, s.ephemeral.y, "epk")
    return Crypto.aesKeyUnwrap(PublicKeyRecipient.concatKdf(agree(epk)), entry.dekCipher, "ECDH-ES+A256KW")
}

/** A public key another device can wrap to: `ECDH-ES+A256KW` (P-256) or `RSA-OAEP-256`. */
class PublicKeyRecipient(val publicKey: PublicJwk) : KeyWrapping {
    override val kekId: String = publicKey.thumbprint
    override val alg: String = if (publicKey is PublicJwk.P256) "ECDH-ES+A256KW" else "RSA-OAEP-256"
    override val canWrapWithoutHolder: Boolean get() = true

    override suspend fun wrap(dek: ByteArray): WrappedKey = when (val key = publicKey) {
        is PublicJwk.Rsa -> {
            val bits = java.math.BigInteger(1, key.n).bitLength()
            if (bits < PublicJwk.RSA_MIN_BITS) throw VaultException.WeakParameters("an RSA key of $bits bits; at least ${PublicJwk.RSA_MIN_BITS} are required")
            WrappedKey(kekId, Crypto.rsaEncrypt(Crypto.rsaPublicKey(key.n, key.e, "jwk"), dek), Scheme.RsaOaep256(key))
        }
        is PublicJwk.P256 -> {
            val recipient = Crypto.p256PublicKey(key.x, key.y, "jwk")
            val ephemeral = Crypto.p256Generate()
            val kek = concatKdf(Crypto.ecdh(ephemeral.private, recipient))
            val raw = Crypto.rawPoint(ephemeral.public as ECPublicKey)
            WrappedKey(kekId, Crypto.aesKeyWrap(kek, dek),
                Scheme.EcdhEsA256kw(PublicJwk.P256(raw.copyOfRange(0, 32), raw.copyOfRange(32, 64)), key))
        }
    }

    companion object {
        /** The recipient an entry names in its `jwk`, so any member can re-wrap during a rotation. */
        fun of(entry: WrappedKey): PublicKeyRecipient? = when (val s = entry.scheme) {
            is Scheme.EcdhEsA256kw -> PublicKeyRecipient(s.recipient)
            is Scheme.RsaOaep256 -> PublicKeyRecipient(s.recipient)
            else -> null
        }

        /** JOSE Concat KDF for ECDH-ES+A256KW with empty apu/apv (§7.2). */
        fun concatKdf(z: ByteArray): ByteArray = Crypto.sha256(Crypto.concat(Crypto.u32be(1), z, Crypto.u32be(14),
            Crypto.utf8("ECDH-ES+A256KW"), Crypto.u32be(0), Crypto.u32be(0), Crypto.u32be(256)))
    }
}

/** A P-256 key pair as key-encryption key (`ECDH-ES+A256KW`), as Swift's `DeviceKEK`; also the pairing key. */
class DeviceKek(private val privateKey: PrivateKey, val publicKey: PublicJwk.P256) : KeyEncryptionKey {
    val recipient = PublicKeyRecipient(publicKey)
    override val kekId: String get() = recipient.kekId
    override val alg: String get() = "ECDH-ES+A256KW"
    override val canWrapWithoutHolder: Boolean get() = true

    override suspend fun wrap(dek: ByteArray): WrappedKey = recipient.wrap(dek)

    override suspend fun unwrap(entry: WrappedKey): ByteArray = ecdhEsUnwrap(entry) { epk ->
        try { Crypto.ecdh(privateKey, epk) } catch (e: GeneralSecurityException) {
            throw VaultException.CryptoFailure("ECDH-ES key agreement failed", e)
        }
    }

    /** The private scalar, 32 bytes, for storing it encrypted at rest. */
    fun privateScalar(): ByteArray = Crypto.fixed32((privateKey as java.security.interfaces.ECPrivateKey).s)

    companion object {
        fun generate(): DeviceKek {
            val pair = Crypto.p256Generate()
            val raw = Crypto.rawPoint(pair.public as ECPublicKey)
            return DeviceKek(pair.private, PublicJwk.P256(raw.copyOfRange(0, 32), raw.copyOfRange(32, 64)))
        }

        fun fromRaw(d: ByteArray, x: ByteArray, y: ByteArray): DeviceKek {
            Crypto.p256PublicKey(x, y, "key")
            return DeviceKek(Crypto.p256PrivateKey(d), PublicJwk.P256(x, y))
        }
    }
}

/** The seed's iOS scheme (`WV-ECDH-SELF+A256GCMKW`, §7.1) with a software P-256 key. */
class SelfEcdhKek(private val privateKey: PrivateKey, private val x: ByteArray, private val y: ByteArray) : KeyEncryptionKey {
    override val kekId: String = Base64Url.encode(x + y)
    override val alg: String get() = "WV-ECDH-SELF+A256GCMKW"
    override val canWrapWithoutHolder: Boolean get() = false

    private fun wrappingKey(): ByteArray =
        Crypto.hkdf(Crypto.ecdh(privateKey, Crypto.p256PublicKey(x, y, "key")), ByteArray(0), Crypto.utf8("vault-kek-v1"), 32)

    override suspend fun wrap(dek: ByteArray): WrappedKey {
        val (iv, sealed) = Crypto.gcmSeal(wrappingKey(), dek, null)
        return WrappedKey(kekId, iv + sealed, Scheme.SelfEcdh)
    }

    override suspend fun unwrap(entry: WrappedKey): ByteArray {
        if (entry.scheme !is Scheme.SelfEcdh && entry.scheme !is Scheme.Seed) throw mismatch(entry, "WV-ECDH-SELF+A256GCMKW")
        val (iv, sealed) = seedLayout(entry.dekCipher)
        val dek = Crypto.gcmOpen(wrappingKey(), iv, sealed, null) ?: throw VaultException.UnwrapFailed("self-ECDH: the key does not unwrap this entry")
        return Crypto.checkedPayload(dek, "WV-ECDH-SELF+A256GCMKW")
    }

    companion object {
        fun fromRaw(d: ByteArray, x: ByteArray, y: ByteArray) = SelfEcdhKek(Crypto.p256PrivateKey(d), x, y)
        fun generate(): SelfEcdhKek {
            val pair = Crypto.p256Generate()
            val raw = Crypto.rawPoint(pair.public as ECPublicKey)
            return SelfEcdhKek(pair.private, raw.copyOfRange(0, 32), raw.copyOfRange(32, 64))
        }
    }
}

/** An RSA key pair as key-encryption key (`RSA-OAEP-256`). */
class RsaKek(private val privateKey: RSAPrivateCrtKey) : KeyEncryptionKey {
    val recipient = PublicKeyRecipient(PublicJwk.Rsa(Crypto.unsigned(privateKey.modulus), Crypto.unsigned(privateKey.publicExponent)))
    override val kekId: String get() = recipient.kekId
    override val alg: String get() = "RSA-OAEP-256"
    override val canWrapWithoutHolder: Boolean get() = true

    override suspend fun wrap(dek: ByteArray): WrappedKey = recipient.wrap(dek)

    override suspend fun unwrap(entry: WrappedKey): ByteArray {
        if (entry.scheme !is Scheme.RsaOaep256 && entry.scheme !is Scheme.Seed) throw mismatch(entry, "RSA-OAEP-256")
        // RSA-OAEP-256 entries are MGF1-SHA-256 only; seed-form entries also MGF1-SHA-1, what Java's
        // "OAEPWithSHA-256AndMGF1Padding" writes without an OAEPParameterSpec (FORMAT.md §4.2).
        val paddings = if (entry.scheme is Scheme.Seed) listOf(Crypto.oaepSha256, Crypto.oaepSha256Mgf1Sha1) else listOf(Crypto.oaepSha256)
        for (padding in paddings) {
            try {
                val cipher = Cipher.getInstance("RSA/ECB/OAEPPadding")
                cipher.init(Cipher.DECRYPT_MODE, privateKey, padding)
                return Crypto.checkedPayload(cipher.doFinal(entry.dekCipher), "RSA-OAEP-256")
            } catch (e: GeneralSecurityException) {
                continue
            }
        }
        throw VaultException.UnwrapFailed("RSA-OAEP-256: the key does not unwrap this entry")
    }

    companion object {
        fun fromPkcs8Pem(pem: String): RsaKek {
            val body = pem.lineSequence().filter { !it.startsWith("-----") }.joinToString("")
            val der = java.util.Base64.getMimeDecoder().decode(body)
            return RsaKek(KeyFactory.getInstance("RSA").generatePrivate(PKCS8EncodedKeySpec(der)) as RSAPrivateCrtKey)
        }
        fun generate(): RsaKek {
            val generator = java.security.KeyPairGenerator.getInstance("RSA")
            generator.initialize(2048, Crypto.random)
            return RsaKek(generator.generateKeyPair().private as RSAPrivateCrtKey)
        }
    }
}
