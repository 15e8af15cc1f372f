package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import javax.crypto.Cipher
import javax.crypto.spec.SecretKeySpec

/** FORMAT.md §8: every change a server could make to a stored blob is refused, each with its own typed error. */
class TamperTest {
    private val phone = DeviceKek.generate()
    private val laptop = AesGcmKek(Crypto.randomBytes(32))
    private val counters = InMemoryCounterStore()
    private val sealer = VaultSealer(counters, hint = "Pixel 8")
    private val opener = VaultOpener(counters)
    // The phone created the vault (so it pinned the vault's anchor when the server accepted it, FORMAT.md §11.2).
    private val blob = runSuspending {
        sealer.create(TestSupport.plaintext, "v", listOf(Recipient(phone, "Phone"), Recipient(laptop, "Laptop"))).also { sealer.markAccepted(it) }.blob
    }

    private fun open(blob: ByteArray, keys: List<KeyEncryptionKey> = listOf(phone), vault: String = "v") =
        runSuspending { opener.open(blob, vault, keys) }

    private fun edit(change: (LinkedHashMap<String, JsonValue>) -> Unit) = TestSupport.edit(blob, change)

    private fun editEntry(index: Int, name: String, value: JsonValue?) = edit { m ->
        val entries = TestSupport.entries(m)
        entries[index] = TestSupport.withMember(entries[index], name, value)
        m["wrappedDeks"] = JsonValue.Arr(entries)
    }

    @Test
    fun untouchedBlobRewrittenByAnotherEncoderStillOpens() {
        val rewritten = Crypto.utf8(String(blob, Charsets.UTF_8).replace(",", " ,\n ").replace("\"v\"", "\"\\u0076\""))
        assertFalse(rewritten.contentEquals(blob))
        TestSupport.assertBytes(TestSupport.plaintext, open(rewritten).plaintext)
        // Reordered members too.
        val reordered = edit { m -> val cipher = m.remove("cipher")!!; val c = LinkedHashMap(m); m.clear(); m["cipher"] = cipher; m.putAll(c) }
        TestSupport.assertBytes(TestSupport.plaintext, open(reordered).plaintext)
    }

    @Test
    fun recipientsAltered() {
        TestSupport.expectThrows<VaultException.RecipientsAltered> { open(edit { m -> m["wrappedDeks"] = JsonValue.Arr(TestSupport.entries(m).subList(0, 1)) }) }
        TestSupport.expectThrows<VaultException.RecipientsAltered> { open(edit { m -> m["wrappedDeks"] = JsonValue.Arr(TestSupport.entries(m).reversed()) }) }
        TestSupport.expectThrows<VaultException.RecipientsAltered> { open(editEntry(1, "label", Json.str("Attacker"))) }
        TestSupport.expectThrows<VaultException.RecipientsAltered> { open(editEntry(1, "created", Json.str("2020-01-01T00:00:00.000Z"))) }
        // An entry added for an attacker's key.
        val attacker = runSuspending { AesGcmKek(Crypto.randomBytes(32)).wrap(Crypto.randomBytes(32)).labeled("x", "2026-01-01T00:00:00.000Z") }
        TestSupport.expectThrows<VaultException.RecipientsAltered> { open(edit { m -> m["wrappedDeks"] = JsonValue.Arr(TestSupport.entries(m) + attacker.json) }) }
    }

    @Test
    fun hintTimestampAndCounterAltered() {
        TestSupport.expectThrows<VaultException.HintAltered> { open(edit { it["hint"] = Json.str("iPhone 15 Pro") }) }
        TestSupport.expectThrows<VaultException.HintAltered> { open(edit { it.remove("hint") }) }
        TestSupport.expectThrows<VaultException.TimestampAltered> { open(edit { it["updatedUtc"] = Json.str("2030-01-01T00:00:00.000Z") }) }
        TestSupport.expectThrows<VaultException.CounterAltered> { open(edit { it["counter"] = Json.int(99) }) }
        TestSupport.expectThrows<VaultException.CounterAltered> { open(edit { it["dek_seals"] = Json.int(7) }) }
    }

    @Test
    fun ciphertextIvTagAltered() {
        fun flip(member: String, index: (Int) -> Int) = edit { m ->
            val bytes = Base64Url.decode(m[member]!!.string!!)!!
            val i = index(bytes.size)
            bytes[i] = (bytes[i].toInt() xor 0x10).toByte()
            m[member] = Json.str(Base64Url.encode(bytes))
        }
        TestSupport.expectThrows<VaultException.CiphertextAltered> { open(flip("cipher") { it / 2 }) }
        TestSupport.expectThrows<VaultException.CiphertextAltered> { open(flip("iv") { 0 }) }
        TestSupport.expectThrows<VaultException.CiphertextAltered> { open(flip("tag") { 15 }) }
        // macs are covered by the AAD: a changed MAC of an unchanged member is caught by MAC or tag.
        TestSupport.expectThrows<VaultException>({ open(flip("macs") { 79 }) })
    }

    @Test
    fun rollbackIsRefusedBeforeAnyKeyIsUsed() {
        val first = open(blob)
        val second = runSuspending { sealer.seal(first.plaintext, first.state) }
        open(second.blob)
        open(second.blob) // an equal counter is re-reading the current version
        TestSupport.expectThrows<VaultException.Rollback> { open(blob) }
        // No key is asked: a key that would throw is never touched.
        val untouchable = FakeKeystore.kek(SecretKeySpec(Crypto.randomBytes(32), "AES"), "k", { _: Cipher -> throw AssertionError("prompted") })
        TestSupport.expectThrows<VaultException.Rollback> { open(blob, listOf(untouchable)) }
        // Other vaults keep their own counters (read through the laptop's symmetric entry, which pins, §11.2).
        TestSupport.assertBytes(TestSupport.plaintext, open(blob, listOf(laptop), vault = "other").plaintext)
    }

    @Test
    fun strippingTheCounterToLookLikeTheSeedIsRefused() {
        open(blob)
        // vault_id, epoch and vault_secret are allowed only with a counter (§11.1) ...
        val stripped = edit { m -> m.remove("counter"); m.remove("dek_seals"); m.remove("macs") }
        TestSupport.expectThrows<VaultException.Malformed> { open(stripped) }
        // ... and without them too, a reader that pinned the vault's anchor refuses a seed-form blob (§11.3).
        val seedLike = edit { m -> for (n in listOf("counter", "dek_seals", "macs", "vault_id", "epoch", "vault_secret")) m.remove(n) }
        TestSupport.expectThrows<VaultException.Downgrade> { open(seedLike) }
        TestSupport.expectThrows<VaultException> { runSuspending { VaultOpener(InMemoryCounterStore()).open(seedLike, "v", listOf(laptop)) } }
        // A reader that never saw the vault fails too: the ciphertext was sealed with AAD.
        TestSupport.expectThrows<VaultException> { runSuspending { VaultOpener(InMemoryCounterStore()).open(stripped, "v", listOf(laptop)) } }
    }

    @Test
    fun addingACounterToASeedBlobFailsTheMacs() {
        val dek = Crypto.randomBytes(32)
        val seedBlob = sealer.sealSeedForm(TestSupport.plaintext, dek, listOf(laptop.wrapSeedLayout(dek)))
        TestSupport.assertBytes(TestSupport.plaintext, runSuspending { VaultOpener(InMemoryCounterStore()).open(seedBlob, "s", listOf(laptop)) }.plaintext)
        TestSupport.expectThrows<VaultException.Malformed> { open(TestSupport.edit(seedBlob) { it["counter"] = Json.int(5) }, listOf(laptop), "s2") }
    }

    @Test
    fun wrongKeys() {
        TestSupport.expectThrows<VaultException.NoMatchingKey> { open(blob, listOf(DeviceKek.generate())) }
        TestSupport.expectThrows<VaultException.NoMatchingKey> { open(blob, emptyList()) }
        TestSupport.expectThrows<VaultException.UnwrapFailed> { open(blob, listOf(AesGcmKek(Crypto.randomBytes(32), laptop.kekId))) }
        // An entry altered so that it no longer unwraps (its MAC would also fail, but unwrap comes first).
        TestSupport.expectThrows<VaultException.UnwrapFailed> {
            val entry = TestSupport.entries(Json.parse(blob).obj!!.members.toMap())[1]
            val bytes = Base64Url.decode(entry["dek_cipher"]!!.string!!)!!
            bytes[0] = (bytes[0].toInt() xor 1).toByte()
            open(editEntry(1, "dek_cipher", Json.str(Base64Url.encode(bytes))), listOf(laptop))
        }
    }

    @Test
    fun invalidatedKeystoreKeyIsTyped() {
        // A key that the platform destroys: Cipher.init then throws what the Android layer reports for
        // KeyPermanentlyInvalidatedException after a biometric enrollment change.
        val key = InvalidatableKey(Crypto.randomBytes(32))
        val keystore = FakeKeystore.kek(key, KeystoreKek.newKekId(), { cipher: Cipher -> cipher })
        val created = runSuspending { sealer.create(TestSupport.plaintext, "k", listOf(Recipient(keystore, "Pixel 8"))) }
        TestSupport.assertBytes(TestSupport.plaintext, runSuspending { VaultOpener(InMemoryCounterStore()).open(created.blob, "k", listOf(keystore)) }.plaintext)
        key.invalidate()
        TestSupport.expectThrows<VaultException.Invalidated> { runSuspending { VaultOpener(InMemoryCounterStore()).open(created.blob, "k", listOf(keystore)) } }
        TestSupport.expectThrows<VaultException.Invalidated> { runSuspending { keystore.wrap(Crypto.randomBytes(32)) } }
        // Thrown by the authenticator (the app's BiometricPrompt path) it is recognised the same way.
        val viaPrompt = FakeKeystore.kek(SecretKeySpec(Crypto.randomBytes(32), "AES"), "k2", { _: Cipher -> throw KeystoreFailure.PermanentlyInvalidated() })
        TestSupport.expectThrows<VaultException.Invalidated> { runSuspending { viaPrompt.wrap(Crypto.randomBytes(32)) } }
        assertNotEquals(KeystoreKek.newKekId(), KeystoreKek.newKekId())
        assertTrue(KeystoreKek.newKekId() != "vault-kek")
    }

    @Test
    fun extendedFormIsStrict() {
        TestSupport.expectThrows<VaultException.Malformed> { open(edit { it["extra"] = Json.str("x") }) }
        TestSupport.expectThrows<VaultException.UnsupportedAlgorithm> { open(editEntry(0, "alg", Json.str("dir"))) }
        TestSupport.expectThrows<VaultException.UnsupportedAlgorithm> { open(editEntry(0, "alg", Json.str("A128KW"))) }
        TestSupport.expectThrows<VaultException.Malformed> { open(editEntry(0, "d", Json.str("AAAA"))) }
        TestSupport.expectThrows<VaultException.Malformed> { open(editEntry(0, "label", null)) }
        TestSupport.expectThrows<VaultException.Malformed> { open(editEntry(0, "created", Json.str("yesterday"))) }
        TestSupport.expectThrows<VaultException.Malformed> { open(editEntry(0, "alg", null)) }
        TestSupport.expectThrows<VaultException.Malformed> { open(editEntry(1, "iv", Json.str("AAAA"))) }
        TestSupport.expectThrows<VaultException.Malformed> { open(editEntry(1, "kek_id", TestSupport.entries(Json.parse(blob).obj!!.members.toMap())[0]["kek_id"])) }
        TestSupport.expectThrows<VaultException.Malformed> { open(edit { it["counter"] = Json.str("1") }) }
        TestSupport.expectThrows<VaultException.Malformed> { open(edit { it["counter"] = JsonValue.Number("1.0") }) }
        TestSupport.expectThrows<VaultException.Malformed> { open(edit { it["macs"] = Json.str("AAAA") }) }
        TestSupport.expectThrows<VaultException.Malformed> { open(edit { it.remove("dek_seals") }) }
        // A JWK with a private member, and a point off the curve.
        val epk = TestSupport.entries(Json.parse(blob).obj!!.members.toMap())[0]["epk"] as JsonValue.Obj
        TestSupport.expectThrows<VaultException.Malformed> { open(editEntry(0, "epk", TestSupport.withMember(epk, "d", Json.str("AAAA")))) }
        val y = Base64Url.decode(epk["y"]!!.string!!)!!
        y[31] = (y[31].toInt() xor 1).toByte()
        TestSupport.expectThrows<VaultException.Malformed> { open(editEntry(0, "epk", TestSupport.withMember(epk, "y", Json.str(Base64Url.encode(y))))) }
    }

    @Test
    fun seedShapeIsChecked() {
        TestSupport.expectThrows<VaultException.InvalidShape> { open(edit { it["iv"] = Json.str("AAAA") }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { open(edit { it["tag"] = Json.str("AAAA") }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { open(edit { it["v"] = Json.int(2) }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { open(edit { it["v"] = JsonValue.Number("1.0") }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { open(edit { it.remove("cipher") }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { open(edit { it["cipher"] = Json.str("AB=") }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { open(edit { it["wrappedDeks"] = JsonValue.Arr(emptyList()) }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { open(edit { it["updatedUtc"] = Json.str("2026-08-12T19:00:00+02:00") }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { open(edit { it["hint"] = Json.str("x".repeat(257)) }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { open(edit { it["hint"] = Json.str("a\u0000b") }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { open(Crypto.utf8("[]")) }
        TestSupport.expectThrows<VaultException.InvalidJson> { open(Crypto.utf8("{\"v\":1,\"v\":1}")) }
    }

    @Test
    fun weakOrExhaustingArgon2CostsAreRefusedBeforeDeriving() {
        for (costs in listOf(Argon2Costs(19455, 2, 1), Argon2Costs(65536, 1, 1), Argon2Costs(65536, 3, 0), Argon2Costs(1048577, 3, 1),
            Argon2Costs(65536, 17, 1), Argon2Costs(65536, 3, 17))) {
            TestSupport.expectThrows<VaultException.WeakParameters> { PassphraseKek.derive("pw", ByteArray(16), costs) }
        }
        // A blob whose passphrase entry had its costs lowered.
        val vector = java.io.File(TestSupport.vectorDirectory, "a256kw-passphrase.blob.json").readBytes()
        val lowered = TestSupport.edit(vector) { m ->
            val entries = TestSupport.entries(m)
            entries[0] = TestSupport.withMember(entries[0], "m", Json.int(1024))
            m["wrappedDeks"] = JsonValue.Arr(entries)
        }
        TestSupport.expectThrows<VaultException.WeakParameters> { PassphraseKek.unlock("correct horse battery staple", VaultEnvelope.parse(lowered)) }
    }

    @Test
    fun tooLargeIsRefusedWhenSealing() {
        val small = VaultSealer(InMemoryCounterStore(), maxBlobBytes = 2000)
        val e = TestSupport.expectThrows<VaultException.BlobTooLarge> { runSuspending { small.create(ByteArray(2000), "v", listOf(Recipient(laptop, "L"))) } }
        assertTrue(e.message!!.contains("2000"))
    }

    @Test
    fun nothingCrashesOnBadInput() {
        // Random mutations of a valid blob: every outcome is a plaintext or a VaultException, never anything else.
        val random = java.util.Random(16)
        var refused = 0
        repeat(3000) {
            val bytes = blob.copyOf()
            repeat(1 + random.nextInt(4)) {
                when (random.nextInt(3)) {
                    0 -> bytes[random.nextInt(bytes.size)] = random.nextInt(256).toByte()
                    1 -> bytes[random.nextInt(bytes.size)] = Crypto.utf8("{}[]\",:0\\e-").let { it[random.nextInt(it.size)] }
                    else -> bytes[random.nextInt(bytes.size)] = (bytes[random.nextInt(bytes.size)])
                }
            }
            val cut = if (random.nextInt(10) == 0) bytes.copyOf(random.nextInt(bytes.size)) else bytes
            try {
                runSuspending { VaultOpener(InMemoryCounterStore()).open(cut, "v", listOf(phone, laptop)) }
            } catch (e: VaultException) {
                refused++
            }
        }
        assertTrue(refused > 2500, "refused $refused")
        // Counters are untouched by refused blobs.
        val store = InMemoryCounterStore()
        store.advance("v", 1)
        try { runSuspending { VaultOpener(store).open(edit { it["counter"] = Json.int(50) }, "v", listOf(phone)) } } catch (e: VaultException.CounterAltered) {}
        assertEquals(1, store.highest("v"))
    }
}
