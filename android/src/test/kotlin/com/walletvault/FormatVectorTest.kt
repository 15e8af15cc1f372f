package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.DynamicTest
import java.io.File
import javax.crypto.Cipher
import javax.crypto.spec.SecretKeySpec

/** Every committed vector in Tests/VaultEnvelopeTests/Vectors/format/ opens with its key, Swift- and Kotlin-written alike. */
class FormatVectorTest {
    companion object {
        fun names(): List<String> = TestSupport.vectorDirectory.listFiles()!!.map { it.name }
            .filter { it.endsWith(".blob.json") }.map { it.removeSuffix(".blob.json") }.sorted()

        fun description(name: String) = Json.parse(File(TestSupport.vectorDirectory, "$name.key.json").readBytes()) as JsonValue.Obj

        fun bytes(key: JsonValue.Obj, member: String) = Base64Url.decode(key[member]!!.string!!)!!

        /** The key a `.key.json` describes (the passphrase kind needs the envelope). */
        fun key(description: JsonValue.Obj, envelope: VaultEnvelope, keystore: Boolean = false): KeyEncryptionKey {
            val key = description["key"] as JsonValue.Obj
            return when (description["kind"]!!.string) {
                "file" -> StoredKeyKek(bytes(key, "k"))
                "recovery-code" -> RecoveryCodeKek(RecoveryCode.parse(key["recovery_code"]!!.string!!))
                "passphrase" -> PassphraseKek.unlock(key["passphrase"]!!.string!!, envelope)
                "aes-gcm" -> if (keystore) {
                    // The Keystore path: a javax.crypto.SecretKey and an authenticator that hands the cipher back.
                    FakeKeystore.kek(SecretKeySpec(bytes(key, "k"), "AES"), description["kek_id"]!!.string!!, { cipher: Cipher -> cipher })
                } else AesGcmKek(bytes(key, "k"), description["kek_id"]?.string)
                "rsa" -> RsaKek.fromPkcs8Pem(key["pkcs8_pem"]!!.string!!)
                "p256" -> DeviceKek.fromRaw(bytes(key, "d"), bytes(key, "x"), bytes(key, "y"))
                "p256-self" -> SelfEcdhKek.fromRaw(bytes(key, "d"), bytes(key, "x"), bytes(key, "y"))
                else -> throw IllegalArgumentException("unknown vector kind")
            }
        }

        /** The reader state a `.key.json` asks for (`reader`: `counter` and, optionally, the pinned `anchor`). */
        fun readerStore(description: JsonValue.Obj): InMemoryCounterStore {
            val store = InMemoryCounterStore()
            val reader = description["reader"] as? JsonValue.Obj ?: return store
            reader["counter"]?.long?.let { if (it > 0) store.advance("vectors", it) }
            reader["anchor"]?.let { store.pin("vectors", anchor(it)) }
            (reader["seen"] as? JsonValue.Arr)?.elements?.forEach { seen ->
                val version = seen as JsonValue.Obj
                store.remember("vectors", version["counter"]!!.long!!, Base64Url.decode(version["digest"]!!.string!!)!!)
            }
            return store
        }

        fun anchor(value: JsonValue): VaultAnchor {
            val obj = value as JsonValue.Obj
            return VaultAnchor(bytes(obj, "vault_id"), obj["epoch"]!!.long!!, bytes(obj, "fingerprint"))
        }

        private fun state(store: InMemoryCounterStore) = "${store.highest("vectors")} ${store.anchor("vectors")}"

        /**
         * A positive vector opens (through the confirmation of FORMAT.md §11.4 when it names a `confirmation_code`,
         * computed over the `.blob.json` file's exact bytes and the entry's kek_id, or `confirmation_kek_id`)
         * and leaves the reader with the `anchor` and `expect_counter` it names; a negative one (`expect_error`) is
         * refused with that error and leaves the reader's state as `reader` gave it.
         */
        fun check(name: String, keystore: Boolean) {
            val description = description(name)
            val blob = File(TestSupport.vectorDirectory, "$name.blob.json").readBytes()
            val expectedError = description["expect_error"]?.string
            val store = readerStore(description)
            val opener = VaultOpener(store)
            val before = state(store)
            val key = try {
                key(description, VaultEnvelope.parse(blob), keystore)
            } catch (e: VaultException) {
                assertEquals(expectedError, e.code, "$name: ${e.message}")
                assertEquals(before, state(store), "$name: the reader's state changed")
                return
            }
            assertEquals(description["kek_id"]!!.string, key.kekId, "$name kek_id")
            if (expectedError != null) {
                try {
                    val code = description["confirmation_code"]?.string
                    if (code == null) runSuspending { opener.open(blob, "vectors", listOf(key)) }
                    else opener.confirmPairing(runSuspending { opener.openUnconfirmed(blob, "vectors", listOf(key)) }, "vectors", code)
                    fail<Unit>("$name opened; expected $expectedError")
                } catch (e: VaultException) {
                    assertEquals(expectedError, e.code, "$name: ${e.message}")
                }
                assertEquals(before, state(store), "$name: the reader's state changed")
                // A refusal after the unwrap (a public-key entry that proves no writer) still holds the key to its DEK.
                description["dek"]?.string?.let { dek ->
                    val entry = VaultEnvelope.parse(blob).entries.first { it.kekId == key.kekId }
                    assertEquals(dek, Base64Url.encode(runSuspending { key.unwrap(entry) }), "$name dek")
                }
                return
            }
            val code = description["confirmation_code"]?.string
            val opened = if (code != null) {
                // §11.4 v2: the code covers the blob file's exact bytes and the kek_id of the entry opened through.
                val unconfirmed = runSuspending { opener.openUnconfirmed(blob, "vectors", listOf(key)) }
                assertEquals(before, state(store), "$name: opening for confirmation stored something")
                assertEquals(description["confirmation_kek_id"]?.string ?: key.kekId, unconfirmed.kekId, "$name confirmation_kek_id")
                opener.confirmPairing(unconfirmed, "vectors", code)
                unconfirmed
            } else runSuspending { opener.open(blob, "vectors", listOf(key)) }
            val envelope = opened.state.envelope
            assertEquals(description["plaintext"]!!.string, Base64Url.encode(opened.plaintext), "$name plaintext")
            assertEquals(description["dek"]!!.string, Base64Url.encode(opened.state.exportDek()), "$name dek")
            assertEquals(description["alg"]?.string, envelope.entries.first { it.kekId == key.kekId }.scheme.alg, "$name alg")
            if (envelope.isExtended) {
                assertEquals(description["aad"]!!.string, Base64Url.encode(HeaderAuthenticator.additionalData(envelope.header)), "$name aad")
            }
            description["anchor"]?.let {
                assertEquals(anchor(it), opened.state.anchor, "$name anchor")
                assertEquals(anchor(it), store.anchor("vectors"), "$name pinned anchor")
            }
            description["expect_counter"]?.long?.let { assertEquals(it, store.highest("vectors"), "$name counter") }
        }
    }

    @TestFactory
    fun everyVectorOpensWithItsKey(): List<DynamicTest> {
        val names = names()
        assertTrue(names.size >= 40, "expected the Swift and Kotlin vectors, found $names")
        assertTrue(names.count { description(it)["expect_error"] != null } >= 7, "expected the negative vectors")
        assertTrue(names.count { it.startsWith("kotlin-anchored-") } >= 8, "expected the Kotlin-written anchored vectors")
        return names.map { name -> DynamicTest.dynamicTest(name) { check(name, keystore = false) } }
    }

    @TestFactory
    fun aesGcmVectorsOpenThroughTheKeystorePath(): List<DynamicTest> =
        names().filter { description(it)["kind"]!!.string == "aes-gcm" }
            .map { name -> DynamicTest.dynamicTest(name) { check(name, keystore = true) } }

    @Test
    fun workedExampleOfSection10() {
        val k = Base64Url.decode(description("a256kw")["key"]!!.obj!!["k"]!!.string!!)!!
        assertEquals("f0d9330b927be1a2a2cdeef76a64366785eb2d4b06c8102581083443cfb7ab22", TestSupport.hex(k))
        assertEquals("SX_-nZJeBnwLVnczaSRtZA", symmetricKekId(k))
        val dek = hexBytes("78d65d6d92c9b16caa67622744bb55c9a89170f0327a2837dd39cad140a40bd6")
        assertEquals("c0578e46370b9117a6d43fb12b0ff93e6cb18358b7d2cea754f36bf3b096779da6a8de2980bd95df", TestSupport.hex(Crypto.aesKeyWrap(k, dek)))
        assertEquals("48392c4a3b273ebc259390d8cc0ca28d26491d6da64af817fbf2c807374dc76c",
            TestSupport.hex(Crypto.hkdf(dek, ByteArray(0), Crypto.utf8("WalletVault-v1 header MAC key"), 32)))
        val envelope = VaultEnvelope.parse(File(TestSupport.vectorDirectory, "a256kw.blob.json").readBytes())
        assertEquals("df3b95a05c4880b3fbd7cc7e62ddfc85" + "0ef2f7cbc46f29bc000f7038e0bb5cf0" + "00bff772242f57b82d825b8ca9fcedb4" +
            "26ae30afa80b4c00aa2dd4bf123bedc0" + "44edd76e231f3411bd0a7d706ce6e0ef", TestSupport.hex(HeaderAuthenticator(dek).macs(envelope.header)))
        assertEquals(482, HeaderAuthenticator.additionalData(envelope.header).size)
    }

    @Test
    fun canonicalEncodingExampleOfSection51() {
        val value = Json.parse("{\"b\":1,\"a\":\"x\"}")
        assertEquals("6f" + "00000002" + "00000001" + "61" + "73" + "00000001" + "78" + "00000001" + "62" + "69" + "0000000000000001",
            TestSupport.hex(CanonicalEncoding.encode(value)))
    }

    private fun hexBytes(hex: String) = ByteArray(hex.length / 2) { hex.substring(it * 2, it * 2 + 2).toInt(16).toByte() }
}
