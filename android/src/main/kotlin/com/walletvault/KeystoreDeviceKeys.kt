package com.walletvault

import java.security.interfaces.ECPublicKey

/**
 * This device's key on Android, with every decision in plain Kotlin over [KeystorePlatform] (the Android source set's
 * `AndroidKeystorePlatform` in an app, a fake in tests).
 *
 * The entry is `ECDH-ES+A256KW` to a P-256 key (FORMAT.md §7.2), so any member can re-wrap to it when it rotates the
 * DEK (revoking a third device no longer drops this one, issue 27 point 7). The private half:
 * - API 31+: an AndroidKeyStore EC key with `PURPOSE_AGREE_KEY`, biometric-bound. `BiometricPrompt.CryptoObject` takes
 *   a `KeyAgreement` only from API 36.1, so the key accepts a strong biometric of the last
 *   [AGREEMENT_AUTHENTICATION_SECONDS] seconds, and the prompt runs without a crypto object just before the agreement.
 * - below: a software P-256 key whose scalar is sealed under the seed's §3 key (AES-256-GCM, user authentication,
 *   `AUTH_BIOMETRIC_STRONG`, timeout 0, invalidated by enrollment), the seal and unseal done inside the prompt's
 *   `CryptoObject`.
 * Either key is generated in StrongBox when the device has `FEATURE_STRONGBOX_KEYSTORE`, in the plain Keystore
 * otherwise or when StrongBox refuses it; the choice is recorded ([storageLevel], shown by [VaultSyncEngine.devices]).
 *
 * The record (alias, public key, storage, sealed scalar) lives in [store], the library's state in `noBackupFilesDir`.
 * A record whose alias the Keystore no longer holds is an invalidated key, as Swift's key store reads a missing item:
 * files restored onto another device never get that far ([LocalVaultStore] clears them, their at-rest key is not
 * there), so the Keystore deleted this device's key (removing the screen lock deletes auth-bound keys). The record
 * stays, so that [lastKekId] names the dead entry that recovering or pairing again removes.
 */
public class KeystoreDeviceKeys(
    private val platform: KeystorePlatform,
    private val authenticator: UserAuthenticator,
    private val store: LocalVaultStore
) : DeviceKeyStore {
    public companion object {
        /** The API level from which the EC agreement key lives in the Keystore (`PURPOSE_AGREE_KEY`, KeyMint 100). */
        public const val AGREEMENT_MIN_SDK: Int = 31
        /** How long one strong biometric authentication unlocks the EC agreement key: long enough for one open. */
        public const val AGREEMENT_AUTHENTICATION_SECONDS: Int = 10
        /** The [LocalVaultStore] file of the record. */
        public const val RECORD: String = "device-key"

        /**
         * The key this device gets: the EC agreement key on API [AGREEMENT_MIN_SDK]+, else the §3 AES key; in
         * StrongBox when [hasStrongBox].
         */
        public fun specFor(sdkInt: Int, hasStrongBox: Boolean, alias: String): KeystoreKeySpec =
            if (sdkInt >= AGREEMENT_MIN_SDK) KeystoreKeySpec(alias, KeystoreKeySpec.Kind.EC_P256_AGREEMENT, hasStrongBox, AGREEMENT_AUTHENTICATION_SECONDS)
            else KeystoreKeySpec(alias, KeystoreKeySpec.Kind.AES_256_GCM, hasStrongBox, 0)
    }

    private class Record(val alias: String, val kind: KeystoreKeySpec.Kind, val storage: KeyStorageLevel, val publicKey: PublicJwk.P256,
                         val sealedIv: ByteArray?, val sealedScalar: ByteArray?)

    private fun readRecord(): Record? {
        val obj = store.read(RECORD)?.let { Json.parse(it) as? JsonValue.Obj } ?: return null
        fun bytes(name: String) = obj[name]?.string?.let { Base64Url.decode(it) }
        val broken = { SyncException(SyncException.Code.LOCAL_STORAGE, "$RECORD cannot be read back") }
        val kind = runCatching { KeystoreKeySpec.Kind.valueOf(obj["kind"]?.string ?: "") }.getOrNull() ?: throw broken()
        val storage = runCatching { KeyStorageLevel.valueOf(obj["storage"]?.string ?: "") }.getOrNull() ?: throw broken()
        val x = bytes("x") ?: throw broken()
        val y = bytes("y") ?: throw broken()
        return Record(obj["alias"]?.string ?: throw broken(), kind, storage, PublicJwk.P256(x, y), bytes("iv"), bytes("sealed"))
    }

    private fun writeRecord(record: Record) {
        val members = mutableListOf(Pair("alias", Json.str(record.alias) as JsonValue), Pair("kind", Json.str(record.kind.name) as JsonValue),
            Pair("storage", Json.str(record.storage.name) as JsonValue), Pair("x", Json.str(Base64Url.encode(record.publicKey.x)) as JsonValue),
            Pair("y", Json.str(Base64Url.encode(record.publicKey.y)) as JsonValue))
        record.sealedIv?.let { members.add(Pair("iv", Json.str(Base64Url.encode(it)))) }
        record.sealedScalar?.let { members.add(Pair("sealed", Json.str(Base64Url.encode(it)))) }
        store.write(RECORD, Json.write(JsonValue.Obj(members)))
    }

    /**
     * This device's key, or null before the first one. Throws [VaultException.Invalidated] when the Keystore no longer
     * holds it.
     */
    override fun current(): KeyEncryptionKey? {
        val record = readRecord() ?: return null
        if (!holds(record.alias)) throw VaultException.Invalidated("the Keystore no longer holds this device's key")
        return DeviceKey(record)
    }

    /** The recorded key's `kek_id`, whether or not the Keystore still holds it. */
    override fun lastKekId(): String? = readRecord()?.let { PublicKeyRecipient(it.publicKey).kekId }

    /** Whether the Keystore holds [alias]; when it cannot say, yes: a record is never dropped on doubt. */
    private fun holds(alias: String): Boolean = try { platform.containsAlias(alias) } catch (e: KeystoreFailure) { true }

    /** Where [current]'s key lives, as recorded when it was generated. */
    override fun storageLevel(): KeyStorageLevel? = readRecord()?.storage

    /**
     * Generates a new key under a new alias (the previous one is deleted: it is dead or replaced) and records it.
     * Below API 31 this shows the prompt once, to seal the software scalar. Throws [VaultException] as
     * [KeystoreFailure.vaultException] reads the platform's refusal.
     */
    override suspend fun create(): KeyEncryptionKey {
        readRecord()?.let { old -> runCatching { platform.deleteAlias(old.alias) } }
        val spec = specFor(platform.sdkInt, platform.hasStrongBox(), "walletvault-" + Base64Url.encode(Crypto.randomBytes(12)))
        val (storage, point) = generate(spec)
        val record = when (spec.kind) {
            KeystoreKeySpec.Kind.EC_P256_AGREEMENT -> {
                val raw = point ?: throw VaultException.KeyStorage("the Keystore returned no public key")
                if (raw.size != 64) throw VaultException.KeyStorage("the Keystore's public key is not a P-256 point")
                Crypto.p256PublicKey(raw.copyOfRange(0, 32), raw.copyOfRange(32, 64), "Keystore key")
                Record(spec.alias, spec.kind, storage, PublicJwk.P256(raw.copyOfRange(0, 32), raw.copyOfRange(32, 64)), null, null)
            }
            KeystoreKeySpec.Kind.AES_256_GCM -> {
                val software = DeviceKek.generate()
                val scalar = software.privateScalar()
                try {
                    val cipher = prompted(authenticator, keystoreCall { platform.initCipher(spec.alias, true, null) })
                    val sealed = finishing(platform) { cipher.doFinal(scalar) }
                    Record(spec.alias, spec.kind, storage, software.publicKey, cipher.iv, sealed)
                } finally {
                    scalar.fill(0)
                }
            }
        }
        writeRecord(record)
        return DeviceKey(record)
    }

    /**
     * StrongBox first when asked for; on `StrongBoxUnavailableException` (or another refusal of the StrongBox key:
     * some devices throw `InvalidAlgorithmParameterException` instead) the same key in the plain Keystore.
     */
    private fun generate(spec: KeystoreKeySpec): Pair<KeyStorageLevel, ByteArray?> {
        if (spec.strongBox) {
            try {
                return Pair(KeyStorageLevel.STRONGBOX, keystoreCall { rawGenerate(spec) })
            } catch (e: VaultException) {
                if (e.cause !is KeystoreFailure.StrongBoxUnavailable && e.cause !is KeystoreFailure.Other) throw e
                runCatching { platform.deleteAlias(spec.alias) }
            }
        }
        return Pair(KeyStorageLevel.TRUSTED_ENVIRONMENT, keystoreCall { rawGenerate(spec.withoutStrongBox()) })
    }

    private fun rawGenerate(spec: KeystoreKeySpec): ByteArray? = platform.generate(spec)

    /** The P-256 key of a record: anyone wraps to its public key; unwrapping needs the prompt. */
    private inner class DeviceKey(private val record: Record) : KeyEncryptionKey {
        private val recipient = PublicKeyRecipient(record.publicKey)
        override val kekId: String get() = recipient.kekId
        override val alg: String get() = "ECDH-ES+A256KW"
        override val canWrapWithoutHolder: Boolean get() = true

        override suspend fun wrap(dek: ByteArray): WrappedKey = recipient.wrap(dek)

        override suspend fun unwrap(entry: WrappedKey): ByteArray {
            if (entry.scheme !is Scheme.EcdhEsA256kw) throw VaultException.UnwrapFailed("entry is ${entry.scheme.alg ?: "seed-form"}, this key unwraps ECDH-ES+A256KW")
            if (!holds(record.alias)) throw KeystoreFailure.KeyMissing(record.alias).vaultException()
            return when (record.kind) {
                KeystoreKeySpec.Kind.EC_P256_AGREEMENT -> {
                    promptedBare(authenticator, null)
                    ecdhEsUnwrap(entry) { epk: ECPublicKey -> keystoreCall { platform.agree(record.alias, epk) } }
                }
                KeystoreKeySpec.Kind.AES_256_GCM -> {
                    val iv = record.sealedIv ?: throw VaultException.KeyStorage("$RECORD has no sealed key")
                    val sealed = record.sealedScalar ?: throw VaultException.KeyStorage("$RECORD has no sealed key")
                    val cipher = prompted(authenticator, keystoreCall { platform.initCipher(record.alias, false, iv) })
                    val scalar = finishing(platform) { cipher.doFinal(sealed) }
                    try {
                        DeviceKek.fromRaw(scalar, record.publicKey.x, record.publicKey.y).unwrap(entry)
                    } finally {
                        scalar.fill(0)
                    }
                }
            }
        }
    }
}
