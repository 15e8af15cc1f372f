package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class KeysTest {
    @Test
    fun recoveryCodeRoundTripsAndNamesMistypedGroups() {
        val code = RecoveryCode.generate()
        val text = code.formatted
        assertTrue(Regex("([0-9A-HJKMNP-TV-Z]{5}-){6}[0-9A-HJKMNP-TV-Z]{5}").matches(text), text)
        val again = RecoveryCode.parse(text.map { if (it in 'A'..'Z') it + 32 else it }.joinToString("").replace("-", " "))
        assertEquals(RecoveryCodeKek(code).kekId, RecoveryCodeKek(again).kekId)
        // One changed character in group 3 is reported as group 3.
        val chars = text.toCharArray()
        val i = 2 * 6 + 1
        chars[i] = RecoveryCode.ALPHABET[(RecoveryCode.ALPHABET.indexOf(chars[i]) + 1) % 32]
        val e = TestSupport.expectThrows<VaultException.InvalidRecoveryCode> { RecoveryCode.parse(String(chars)) }
        assertTrue(e.message!!.contains("group 3"), e.message)
        TestSupport.expectThrows<VaultException.InvalidRecoveryCode> { RecoveryCode.parse("ABC") }
        TestSupport.expectThrows<VaultException.InvalidRecoveryCode> { RecoveryCode.parse(text.replace(text[0], 'U')) }
    }

    @Test
    fun recoveryCodeReadsConfusableLetters() {
        val vector = FormatVectorTest.description("a256kw-recovery-code")
        val text = vector["key"]!!.obj!!["recovery_code"]!!.string!!
        val confused = text.replace('0', 'O').replace('1', 'l')
        assertEquals(vector["kek_id"]!!.string, RecoveryCodeKek(RecoveryCode.parse(confused)).kekId)
    }

    @Test
    fun everyKeyKindRoundTripsThroughSealAndOpen() {
        val keys = listOf(StoredKeyKek.generate(), RecoveryCodeKek(RecoveryCode.generate()), AesGcmKek(Crypto.randomBytes(32)),
            RsaKek.generate(), DeviceKek.generate(), SelfEcdhKek.generate(),
            FakeKeystore.kek(javax.crypto.spec.SecretKeySpec(Crypto.randomBytes(32), "AES"), KeystoreKek.newKekId(), { c: javax.crypto.Cipher -> c }),
            PassphraseKek.create("a passphrase", Argon2Costs.FLOOR))
        val counters = InMemoryCounterStore()
        val sealer = VaultSealer(counters)
        val created = runSuspending { sealer.create(TestSupport.plaintext, "v", keys.map { Recipient(it, it.alg) }) }
        for (key in keys) {
            // A reader that pinned the vault's anchor reads through every kind of entry (FORMAT.md §11.3) ...
            val pinned = InMemoryCounterStore().also { it.pin("v", created.state.anchor!!) }
            val opened = runSuspending { VaultOpener(pinned).open(created.blob, "v", listOf(key)) }
            TestSupport.assertBytes(TestSupport.plaintext, opened.plaintext)
            // ... one that has not, only through entries that authenticate the writer (§11.2), and pins from them.
            val fresh = InMemoryCounterStore()
            if (key is RsaKek || key is DeviceKek) {
                TestSupport.expectThrows<VaultException.UnconfirmedVault> { runSuspending { VaultOpener(fresh).open(created.blob, "v", listOf(key)) } }
                assertEquals(null, fresh.anchor("v"))
                assertEquals(0L, fresh.highest("v"))
            } else {
                runSuspending { VaultOpener(fresh).open(created.blob, "v", listOf(key)) }
                assertEquals(created.state.anchor, fresh.anchor("v"))
                assertEquals(1L, fresh.highest("v"))
            }
        }
        // A rotation re-wraps for every key that needs no holder and reports the others.
        val opened = runSuspending { VaultOpener(counters).open(created.blob, "v", listOf(keys[0])) }
        val rotated = runSuspending { sealer.rotateDek(opened.plaintext, opened.state, keys) }
        assertEquals(setOf(keys[5].kekId, keys[6].kekId), rotated.skipped!!.map { it.kekId }.toSet())
        assertTrue(rotated.skipped!!.all { it.reason == "needsHolder" })
        assertEquals(created.state.anchor, rotated.state.anchor, "a DEK rotation alone keeps the epoch and the secret")
        for (key in keys.filter { it.canWrapWithoutHolder }) {
            TestSupport.assertBytes(TestSupport.plaintext, runSuspending { VaultOpener(counters).open(rotated.blob, "v", listOf(key)) }.plaintext)
        }
    }

    @Test
    fun passphraseIsFoundByItsKekId() {
        val kek = PassphraseKek.create("hunter2 hunter2", Argon2Costs.FLOOR)
        val created = runSuspending { VaultSealer(InMemoryCounterStore()).create(TestSupport.plaintext, "v", listOf(Recipient(kek, "Passphrase"))) }
        val envelope = VaultEnvelope.parse(created.blob)
        assertEquals(kek.kekId, PassphraseKek.unlock("hunter2 hunter2", envelope).kekId)
        TestSupport.expectThrows<VaultException.NoMatchingKey> { PassphraseKek.unlock("wrong", envelope) }
    }

    @Test
    fun theFirstRewriteOfASeedBlobRotatesTheDek() {
        val description = FormatVectorTest.description("seed-android")
        val key = AesGcmKek(FormatVectorTest.bytes(description["key"] as JsonValue.Obj, "k"), "vault-kek")
        val blob = java.io.File(TestSupport.vectorDirectory, "seed-android.blob.json").readBytes()
        val counters = InMemoryCounterStore()
        val opened = runSuspending { VaultOpener(counters).open(blob, "s", listOf(key)) }
        val sealed = runSuspending { VaultSealer(counters, hint = "Pixel 8").seal(opened.plaintext, opened.state, listOf(key)) }
        assertTrue(sealed.skipped!!.isEmpty())
        val envelope = VaultEnvelope.parse(sealed.blob)
        assertEquals(1L, envelope.counter)
        assertEquals(1L, envelope.epoch, "the first write migrates: a new vault_id and S_1 (FORMAT.md §11.7)")
        assertEquals(1L, envelope.dekSeals)
        assertTrue(!sealed.state.exportDek().contentEquals(opened.state.exportDek()), "a new DEK")
        assertEquals("A256GCMKW", envelope.entries.single().scheme.alg)
        TestSupport.assertBytes(opened.plaintext, runSuspending { VaultOpener(counters).open(sealed.blob, "s", listOf(key)) }.plaintext)
        // Once the anchor is pinned, the seed blob is a downgrade (§11.3); with only a counter it was a rollback.
        TestSupport.expectThrows<VaultException.Downgrade> { runSuspending { VaultOpener(counters).open(blob, "s", listOf(key)) } }
        val countersOnly = InMemoryCounterStore().also { it.advance("s", 1) }
        TestSupport.expectThrows<VaultException.Rollback> { runSuspending { VaultOpener(countersOnly).open(blob, "s", listOf(key)) } }
    }
}
