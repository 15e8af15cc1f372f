package com.walletvault

import org.junit.jupiter.api.Test
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable
import java.io.File
import java.security.interfaces.RSAPrivateCrtKey
import javax.crypto.Cipher
import javax.crypto.spec.SecretKeySpec

/**
 * Writes the Kotlin-written anchored vectors (`kotlin-anchored-*.blob.json` / `.key.json`, FORMAT.md §11) beside the
 * Swift ones, in the same form (Vectors/format/README.md). Run once: `WALLETVAULT_WRITE_KOTLIN_VECTORS=1
 * android/build.sh`, then commit the files; normal runs only read them (FormatVectorTest here, FormatVectorTests in
 * Swift). The pre-anchor `kotlin-*` vectors written before §11 are kept as written and no longer generated.
 */
class KotlinVectorWriter {
    private val out = TestSupport.vectorDirectory

    private fun b64(bytes: ByteArray) = Json.str(Base64Url.encode(bytes))

    private fun anchorJson(anchor: VaultAnchor) =
        Json.obj("vault_id" to b64(anchor.id), "epoch" to Json.int(anchor.epoch), "fingerprint" to b64(anchor.fingerprint))

    private fun write(name: String, blob: ByteArray, kind: String, key: JsonValue.Obj, kekId: String, alg: String?,
                      extra: List<Pair<String, JsonValue>>, opened: VaultState? = null) {
        val members = arrayListOf<Pair<String, JsonValue>>("kind" to Json.str(kind), "alg" to (alg?.let { Json.str(it) } ?: JsonValue.Null),
            "kek_id" to Json.str(kekId), "key" to key, "vault_id" to Json.str("vectors"))
        if (opened != null) {
            members.add("plaintext" to b64(TestSupport.plaintext))
            members.add("dek" to b64(opened.exportDek()))
            members.add("aad" to b64(HeaderAuthenticator.additionalData(opened.envelope.header)))
        }
        members.addAll(extra)
        File(out, "$name.key.json").writeBytes(Json.write(JsonValue.Obj(members)) + byteArrayOf(0x0A))
        File(out, "$name.blob.json").writeBytes(blob + byteArrayOf(0x0A))
    }

    /** A vault of one entry for [key]; the vector's reader starts from [reader] and ends with the blob's anchor. */
    private fun sealed(name: String, key: KeyWrapping, kind: String, keyMembers: JsonValue.Obj, how: String = "fresh") {
        val sealer = VaultSealer(InMemoryCounterStore(), hint = "Kotlin vector writer")
        val vault = runSuspending { sealer.create(TestSupport.plaintext, "vectors", listOf(Recipient(key, name))) }
        val anchor = vault.state.anchor!!
        val extra = arrayListOf<Pair<String, JsonValue>>("anchor" to anchorJson(anchor), "expect_counter" to Json.int(1))
        when (how) {
            // §11.4 v2: over the blob file's exact bytes (with its final newline, as written below) and the entry's kek_id.
            "confirm" -> {
                extra.add("confirmation_code" to Json.str(vault.state.confirmationCode(key.kekId, vault.blob + byteArrayOf(0x0A))!!))
                extra.add("confirmation_kek_id" to Json.str(key.kekId))
            }
            "pinned" -> extra.add("reader" to Json.obj("counter" to Json.int(1), "anchor" to anchorJson(anchor)))
        }
        write(name, vault.blob, kind, keyMembers, key.kekId, key.alg, extra, vault.state)
    }

    private fun ec(d: ByteArray, x: ByteArray, y: ByteArray) =
        Json.obj("kty" to Json.str("EC"), "crv" to Json.str("P-256"), "x" to b64(x), "y" to b64(y), "d" to b64(d))

    @Test
    @EnabledIfEnvironmentVariable(named = "WALLETVAULT_WRITE_KOTLIN_VECTORS", matches = "1")
    fun writeVectors() {
        val stored = Crypto.randomBytes(32)
        sealed("kotlin-anchored-a256kw", StoredKeyKek(stored), "file", Json.obj("kty" to Json.str("oct"), "k" to b64(stored)))

        val code = RecoveryCode.generate()
        sealed("kotlin-anchored-a256kw-recovery-code", RecoveryCodeKek(code), "recovery-code", Json.obj("recovery_code" to Json.str(code.formatted)))

        // Composed é in the vector, so a reader that skips NFC would still match; the NFC rule has its own tests.
        val passphrase = "Kotlin wrote this passphrase entry, d\u00e9j\u00e0"
        sealed("kotlin-anchored-a256kw-passphrase", PassphraseKek.create(passphrase, Argon2Costs.FLOOR), "passphrase", Json.obj("passphrase" to Json.str(passphrase)))

        // The Keystore path with a software SecretKey: IV chosen by the cipher, read back after init; app-named kek_id.
        val gcm = Crypto.randomBytes(32)
        sealed("kotlin-anchored-a256gcmkw-keystore", FakeKeystore.kek(SecretKeySpec(gcm, "AES"), KeystoreKek.newKekId(), { c: Cipher -> c }), "aes-gcm",
            Json.obj("kty" to Json.str("oct"), "k" to b64(gcm)))

        val rsa = RsaKek.generate()
        val field = RsaKek::class.java.getDeclaredField("privateKey").also { it.isAccessible = true }
        val der = (field.get(rsa) as RSAPrivateCrtKey).encoded
        val pem = "-----BEGIN PRIVATE KEY-----\n" + java.util.Base64.getMimeEncoder(64, "\n".toByteArray()).encodeToString(der) + "\n-----END PRIVATE KEY-----\n"
        sealed("kotlin-anchored-rsa-oaep-256", rsa, "rsa", Json.obj("pkcs8_pem" to Json.str(pem)), how = "pinned")

        val device = DeviceKek.generate()
        val deviceJwk = ec(device.privateScalar(), device.publicKey.x, device.publicKey.y)
        sealed("kotlin-anchored-ecdh-es+a256kw", device, "p256", deviceJwk, how = "confirm")

        val pair = Crypto.p256Generate()
        val raw = Crypto.rawPoint(pair.public as java.security.interfaces.ECPublicKey)
        val d = Crypto.fixed32((pair.private as java.security.interfaces.ECPrivateKey).s)
        val selfKey = SelfEcdhKek.fromRaw(d, raw.copyOfRange(0, 32), raw.copyOfRange(32, 64))
        sealed("kotlin-anchored-wv-ecdh-self+a256gcmkw", selfKey, "p256-self", ec(d, raw.copyOfRange(0, 32), raw.copyOfRange(32, 64)))

        revocationVectors()
        boundRecoveryVector()
        chainedVector()
        writeProofVector()
    }

    /** FORMAT.md §11.10 written by the Kotlin sealer: version 2 names version 1's digest, for a reader that kept version 1. */
    private fun chainedVector() {
        val key = Crypto.randomBytes(32)
        val stored = StoredKeyKek(key)
        val sealer = VaultSealer(InMemoryCounterStore(), hint = "Kotlin vector writer")
        val first = runSuspending { sealer.create(TestSupport.plaintext, "vectors", listOf(Recipient(stored, "file"))) }
        val second = runSuspending { sealer.seal(TestSupport.plaintext, first.state) }
        val seen = Json.obj("counter" to Json.int(1), "digest" to b64(VersionDigests.of(first.state.envelope)!!))
        write("kotlin-anchored-chained", second.blob, "file", Json.obj("kty" to Json.str("oct"), "k" to b64(key)),
            stored.kekId, "A256KW", listOf("anchor" to anchorJson(second.state.anchor!!), "expect_counter" to Json.int(2),
                "reader" to Json.obj("counter" to Json.int(1), "anchor" to anchorJson(first.state.anchor!!), "seen" to JsonValue.Arr(listOf(seen)))),
            second.state)
    }

    /**
     * FORMAT.md §11.9 written by the Kotlin sealer: after a revocation (epoch 2) the recovery code's entry wraps the
     * bound payload; a reader with the code and nothing pinned opens it and pins epoch 2.
     */
    private fun boundRecoveryVector() {
        val code = RecoveryCode.generate()
        val sealer = VaultSealer(InMemoryCounterStore(), hint = "Kotlin vector writer")
        val removed = DeviceKek.generate()
        val created = runSuspending {
            sealer.create(TestSupport.plaintext, "vectors", listOf(Recipient(RecoveryCodeKek(code), "Recovery code"), Recipient(removed, "Removed")))
        }
        val revoked = runSuspending { sealer.rotateDek(TestSupport.plaintext, sealer.revoke(removed.kekId, created.state), listOf(RecoveryCodeKek(code))) }
        write("kotlin-anchored-bound-recovery-code-epoch-2", revoked.blob, "recovery-code", Json.obj("recovery_code" to Json.str(code.formatted)),
            RecoveryCodeKek(code).kekId, "A256KW", listOf("anchor" to anchorJson(revoked.state.anchor!!), "expect_counter" to Json.int(2)), revoked.state)
    }

    /** §11.8 written by the Kotlin library: `kotlin-write-proof.json`, in `write-proof.json`'s form: another vault's save. */
    private fun writeProofVector() {
        val id = ByteArray(16) { (0x10 + it).toByte() }
        val basis = VaultSecrets(id, 5, (1 until VaultSecrets.carried(5)).map { ByteArray(32) } + listOf(ByteArray(32) { 0x33 }))
        val next = VaultSecrets(id, 6, (1 until VaultSecrets.carried(6)).map { ByteArray(32) } + listOf(ByteArray(32) { 0x44 }))
        val body = "{\"v\":1,\"counter\":7}"
        val message = WriteProof.message("save", "2026-12-02T07:00:00.000Z", Crypto.utf8(body), WriteKey.of(next).publicKey)
        val vector = Json.obj(
            "description" to Json.str("FORMAT.md \u00a711.8 written by the Kotlin library (KotlinVectorWriter): the write key of epoch 5 of a " +
                "vault whose S_5 is 32 bytes 0x33 and vault_id the bytes 10..1f; the key of epoch 6 for S_6 = 32 bytes 0x44; one save's " +
                "proof message and an ES256 signature of it by the epoch-5 key (BouncyCastle, RFC 6979 nonces). Byte strings are unpadded base64url."),
            "vault_secret" to b64(basis.secrets.last()), "vault_id" to b64(id), "epoch" to Json.int(5),
            "write_key" to b64(WriteKey.of(basis).publicKey),
            "next_vault_secret" to b64(next.secrets.last()), "next_epoch" to Json.int(6), "next_write_key" to b64(WriteKey.of(next).publicKey),
            "action" to Json.str("save"), "stored_sync_id" to Json.str("2026-12-02T07:00:00.000Z"), "body" to Json.str(body),
            "message" to b64(message), "signature" to b64(WriteKey.of(basis).sign(message)))
        File(out, "kotlin-write-proof.json").writeBytes(Json.write(vector) + byteArrayOf(0x0A))
    }

    /**
     * §11.5/§11.6 written by the Kotlin sealer: a member (ECDH-ES entry) pinned at epoch 1 reads the revocation's
     * epoch 2 (`kotlin-anchored-revoked-epoch-2`), and a member that read epoch 2 refuses the revoked device's own
     * epoch-2 fork (`kotlin-negative-revoked-fork`, `writerNotMember`).
     */
    private fun revocationVectors() {
        val owner = StoredKeyKek.generate()
        val member = DeviceKek.generate()
        val revoked = DeviceKek.generate()
        val store = InMemoryCounterStore()
        val sealer = VaultSealer(store, hint = "Kotlin vector writer")
        val created = runSuspending {
            sealer.create(TestSupport.plaintext, "vectors", listOf(Recipient(owner, "Owner"), Recipient(member, "Member"), Recipient(revoked, "Revoked")))
        }
        sealer.markAccepted(created)
        val revokedView = runSuspending { VaultOpener(InMemoryCounterStore().also { it.pin("vectors", created.state.anchor!!) }).open(created.blob, "vectors", listOf(revoked)) }
        val genuine = runSuspending { sealer.rotateDek(TestSupport.plaintext, sealer.revoke(revoked.kekId, created.state), listOf(owner)) }
        val memberJwk = ec(member.privateScalar(), member.publicKey.x, member.publicKey.y)
        write("kotlin-anchored-revoked-epoch-2", genuine.blob, "p256", memberJwk, member.kekId, member.alg, listOf(
            "anchor" to anchorJson(genuine.state.anchor!!), "expect_counter" to Json.int(2),
            "reader" to Json.obj("counter" to Json.int(1), "anchor" to anchorJson(created.state.anchor!!))), genuine.state)
        val forkSealer = VaultSealer(InMemoryCounterStore().also { it.advance("vectors", 99) }, hint = "Kotlin vector writer")
        val fork = runSuspending { forkSealer.rotateDek(TestSupport.plaintext, revokedView.state, listOf(revoked), rotateVaultSecret = true) }
        write("kotlin-negative-revoked-fork", fork.blob, "p256", memberJwk, member.kekId, member.alg, listOf(
            "expect_error" to Json.str("writerNotMember"),
            "reader" to Json.obj("counter" to Json.int(2), "anchor" to anchorJson(genuine.state.anchor!!))))
    }
}
