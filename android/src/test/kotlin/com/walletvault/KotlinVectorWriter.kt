package com.walletvault

import org.junit.jupiter.api.Test
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable
import java.io.File
import java.security.interfaces.RSAPrivateCrtKey
import javax.crypto.Cipher
import javax.crypto.spec.SecretKeySpec

/**
 * Writes the Kotlin-written vectors (`kotlin-*.blob.json` / `.key.json`) beside the Swift ones, in the same form
 * (Vectors/format/README.md). Run once: `WALLETVAULT_WRITE_KOTLIN_VECTORS=1 android/build.sh`, then commit the
 * files; normal runs only read them (FormatVectorTest here, FormatVectorTests in Swift).
 */
class KotlinVectorWriter {
    private val out = TestSupport.vectorDirectory
    private val sealer = VaultSealer(InMemoryCounterStore(), hint = "Kotlin vector writer")

    private fun b64(bytes: ByteArray) = Json.str(Base64Url.encode(bytes))

    private fun write(name: String, blob: ByteArray, dek: ByteArray, kind: String, key: JsonValue.Obj, kekId: String, alg: String?, aad: ByteArray?) {
        val members = arrayListOf<Pair<String, JsonValue>>("kind" to Json.str(kind), "alg" to (alg?.let { Json.str(it) } ?: JsonValue.Null),
            "kek_id" to Json.str(kekId), "key" to key, "vault_id" to Json.str("vectors"), "plaintext" to b64(TestSupport.plaintext), "dek" to b64(dek))
        aad?.let { members.add("aad" to b64(it)) }
        File(out, "$name.key.json").writeBytes(Json.write(JsonValue.Obj(members)) + byteArrayOf(0x0A))
        File(out, "$name.blob.json").writeBytes(blob + byteArrayOf(0x0A))
    }

    private fun sealed(name: String, key: KeyWrapping, kind: String, keyMembers: JsonValue.Obj) {
        val vault = runSuspending { sealer.create(TestSupport.plaintext, name, listOf(Recipient(key, name))) }
        write(name, vault.blob, vault.state.exportDek(), kind, keyMembers, key.kekId, key.alg, HeaderAuthenticator.additionalData(vault.state.envelope.header))
    }

    private fun ec(d: ByteArray, x: ByteArray, y: ByteArray) =
        Json.obj("kty" to Json.str("EC"), "crv" to Json.str("P-256"), "x" to b64(x), "y" to b64(y), "d" to b64(d))

    @Test
    @EnabledIfEnvironmentVariable(named = "WALLETVAULT_WRITE_KOTLIN_VECTORS", matches = "1")
    fun writeVectors() {
        val stored = Crypto.randomBytes(32)
        sealed("kotlin-a256kw", StoredKeyKek(stored), "file", Json.obj("kty" to Json.str("oct"), "k" to b64(stored)))

        val code = RecoveryCode.generate()
        sealed("kotlin-a256kw-recovery-code", RecoveryCodeKek(code), "recovery-code", Json.obj("recovery_code" to Json.str(code.formatted)))

        val passphrase = "Kotlin wrote this passphrase entry"
        sealed("kotlin-a256kw-passphrase", PassphraseKek.create(passphrase, Argon2Costs.FLOOR), "passphrase", Json.obj("passphrase" to Json.str(passphrase)))

        // The Keystore path with a software SecretKey: IV chosen by the cipher, read back after init.
        val gcm = Crypto.randomBytes(32)
        sealed("kotlin-a256gcmkw-keystore", KeystoreKek(SecretKeySpec(gcm, "AES"), KeystoreKek.newKekId(), { c: Cipher -> c }), "aes-gcm",
            Json.obj("kty" to Json.str("oct"), "k" to b64(gcm)))

        val rsa = RsaKek.generate()
        val field = RsaKek::class.java.getDeclaredField("privateKey").also { it.isAccessible = true }
        val der = (field.get(rsa) as RSAPrivateCrtKey).encoded
        val pem = "-----BEGIN PRIVATE KEY-----\n" + java.util.Base64.getMimeEncoder(64, "\n".toByteArray()).encodeToString(der) + "\n-----END PRIVATE KEY-----\n"
        sealed("kotlin-rsa-oaep-256", rsa, "rsa", Json.obj("pkcs8_pem" to Json.str(pem)))

        val device = DeviceKek.generate()
        sealed("kotlin-ecdh-es+a256kw", device, "p256", ec(device.privateScalar(), device.publicKey.x, device.publicKey.y))

        val pair = Crypto.p256Generate()
        val raw = Crypto.rawPoint(pair.public as java.security.interfaces.ECPublicKey)
        val d = Crypto.fixed32((pair.private as java.security.interfaces.ECPrivateKey).s)
        val selfKey = SelfEcdhKek.fromRaw(d, raw.copyOfRange(0, 32), raw.copyOfRange(32, 64))
        sealed("kotlin-wv-ecdh-self+a256gcmkw", selfKey, "p256-self", ec(d, raw.copyOfRange(0, 32), raw.copyOfRange(32, 64)))

        // The seed's Android form as the seed's code writes it: dek_cipher = wrapIv ‖ wrapCipher.doFinal(dek), no counter.
        val androidKey = Crypto.randomBytes(32)
        val keystore = KeystoreKek(SecretKeySpec(androidKey, "AES"), KeystoreKek.newKekId(), { c: Cipher -> c })
        val dek = Crypto.randomBytes(32)
        val entry = runSuspending { keystore.wrapSeedLayout(dek) }
        val blob = VaultSealer(InMemoryCounterStore(), hint = "Pixel 8").sealSeedForm(TestSupport.plaintext, dek, listOf(entry))
        write("kotlin-seed-android", blob, dek, "aes-gcm", Json.obj("kty" to Json.str("oct"), "k" to b64(androidKey)), keystore.kekId, null, null)
    }
}
