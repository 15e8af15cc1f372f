package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.math.BigInteger
import java.security.KeyPairGenerator
import java.security.interfaces.RSAPublicKey
import javax.crypto.Cipher

/**
 * The reader rules of issue 14 attacks 3, 5 and 6 and FORMAT.md §12 as the `format-edges` branch settled them for
 * Swift (`BoundedWorkTests`, `EntryKeyCheckTests`, `ReaderRulesTests`), in the Kotlin library.
 */
class ReaderRulesTest {
    private val created = "2026-12-01T12:00:00.000Z"

    private fun passphraseEntry(costs: Argon2Costs, kekId: String = Base64Url.encode(Crypto.randomBytes(16))) =
        WrappedKey(kekId, Crypto.randomBytes(40), Scheme.A256kwPassphrase(Crypto.randomBytes(16), costs), "p", created)

    private fun envelopeWith(entries: List<WrappedKey>): VaultEnvelope =
        VaultEnvelope.parse(Forger.blob(Crypto.randomBytes(32), entries, 1, null))

    // MARK: attack 3, bounded work

    @Test
    fun argon2idCostsOutsideTheNewCeilingAreWeakParameters() {
        assertTrue(Argon2Costs.CEILING.isWithinReaderLimits)
        assertTrue(Argon2Costs.FLOOR.isWithinReaderLimits)
        for (costs in listOf(Argon2Costs(262145, 2, 1), Argon2Costs(19456, 9, 1), Argon2Costs(19456, 2, 5), Argon2Costs(1048576, 16, 16),
                Argon2Costs(19455, 2, 1), Argon2Costs(19456, 1, 1))) {
            TestSupport.expectThrows<VaultException.WeakParameters> { PassphraseKek.unlock("pw", envelopeWith(listOf(passphraseEntry(costs)))) }
            TestSupport.expectThrows<VaultException.WeakParameters> { PassphraseKek.create("pw", costs) }
        }
    }

    @Test
    fun oneEntryOutOfRangeAmongSeveralRefusesTheBlobBeforeAnyDerivation() {
        // The reader's own (valid) entry is first; the lowered one after it still refuses the blob, not skipped.
        val own = PassphraseKek.create("correct horse", Argon2Costs.FLOOR)
        val ownEntry = runSuspending { own.wrap(Crypto.randomBytes(32)) }.labeled("mine", created)
        TestSupport.expectThrows<VaultException.WeakParameters> {
            PassphraseKek.unlock("correct horse", envelopeWith(listOf(ownEntry, passphraseEntry(Argon2Costs(8, 1, 1)))))
        }
        // (Before the rule the first entry was derived and matched: the blob opened.)
    }

    @Test
    fun morePassphraseEntriesOrMoreWorkThanTheBudgetIsWorkLimitExceeded() {
        TestSupport.expectThrows<VaultException.WorkLimitExceeded> {
            PassphraseKek.unlock("pw", envelopeWith(List(5) { passphraseEntry(Argon2Costs.FLOOR) }))
        }
        TestSupport.expectThrows<VaultException.WorkLimitExceeded> {
            PassphraseKek.unlock("pw", envelopeWith(List(2) { passphraseEntry(Argon2Costs(262144, 3, 1)) }))
        }
        // One entry may use the whole budget (256 MiB × 3), not more; four at the default costs fit exactly.
        Argon2Costs.checkOpenBudget(listOf(Argon2Costs(262144, 3, 1)))
        Argon2Costs.checkOpenBudget(List(4) { Argon2Costs.DEFAULT })
        TestSupport.expectThrows<VaultException.WorkLimitExceeded> { Argon2Costs.checkOpenBudget(listOf(Argon2Costs(262144, 4, 1))) }
        TestSupport.expectThrows<VaultException.WorkLimitExceeded> { PassphraseKek.create("pw", Argon2Costs(262144, 4, 1)) }
        // A writer never seals a set of passphrase entries no reader would derive for.
        val tooMany = List(5) { runSuspending { PassphraseKek.derive("pw", Crypto.randomBytes(16), Argon2Costs.FLOOR) } }
        TestSupport.expectThrows<VaultException.WorkLimitExceeded> {
            runSuspending { VaultSealer(InMemoryCounterStore()).create(TestSupport.plaintext, "v", tooMany.map { Recipient(it, "p") }) }
        }
        // Through the opener's user, the sync engine, it is the blob's fault.
        assertEquals("workLimitExceeded", VaultException.WorkLimitExceeded("x").code)
    }

    @Test
    fun passphrasesAreNormalizedToNfcAndOldAsTypedEntriesStillOpen() {
        val composed = "d\u00e9j\u00e0 vu"
        val decomposed = "de\u0301ja\u0300 vu"
        val kek = PassphraseKek.create(decomposed, Argon2Costs.FLOOR)
        val dek = Crypto.randomBytes(32)
        val entry = runSuspending { kek.wrap(dek) }.labeled("p", created)
        assertEquals(kek.kekId, PassphraseKek.unlock(composed, envelopeWith(listOf(entry))).kekId)
        assertEquals(kek.kekId, PassphraseKek.unlock(decomposed, envelopeWith(listOf(entry))).kekId)
        // An entry enrolled before the rule from the decomposed bytes as typed: found by the second, as-typed pass.
        val salt = Crypto.randomBytes(16)
        val old = Argon2id.derive(Crypto.utf8(decomposed), salt, Argon2Costs.FLOOR)
        val oldEntry = WrappedKey(symmetricKekId(old), Crypto.aesKeyWrap(old, dek), Scheme.A256kwPassphrase(salt, Argon2Costs.FLOOR), "old", created)
        assertEquals(oldEntry.kekId, PassphraseKek.unlock(decomposed, envelopeWith(listOf(oldEntry))).kekId)
        TestSupport.expectThrows<VaultException.NoMatchingKey> { PassphraseKek.unlock(composed, envelopeWith(listOf(oldEntry))) }
    }

    // MARK: attack 5, entries that lie about their key

    @Test
    fun aPublicKeyEntryWhoseKekIdIsNotItsJwksThumbprintIsMalformed() {
        val device = DeviceKek.generate()
        val other = DeviceKek.generate()
        val dek = Crypto.randomBytes(32)
        val entry = runSuspending { device.wrap(dek) }.labeled("d", created)
        VaultEnvelope.parse(Forger.blob(dek, listOf(entry), 1, null))
        val lying = WrappedKey(other.kekId, entry.dekCipher, entry.scheme, "d", created)
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(Forger.blob(dek, listOf(lying), 1, null)) }
        val rsa = RsaKek.generate()
        val rsaEntry = runSuspending { rsa.wrap(dek) }.labeled("r", created)
        val rsaLying = WrappedKey(symmetricKekId(Crypto.randomBytes(32)), rsaEntry.dekCipher, rsaEntry.scheme, "r", created)
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(Forger.blob(dek, listOf(rsaLying), 1, null)) }
    }

    @Test
    fun pointsAreCheckedWhenTheBlobIsParsed() {
        val device = DeviceKek.generate()
        val dek = Crypto.randomBytes(32)
        val entry = runSuspending { device.wrap(dek) }.labeled("d", created)
        val scheme = entry.scheme as Scheme.EcdhEsA256kw
        val p = BigInteger("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff", 16)
        val offCurve = PublicJwk.P256(scheme.ephemeral.x, Crypto.fixed32(BigInteger(1, scheme.ephemeral.y).xor(BigInteger.ONE)))
        val bad = listOf(offCurve, PublicJwk.P256(Crypto.fixed32(p), scheme.ephemeral.y), PublicJwk.P256(scheme.ephemeral.x, Crypto.fixed32(p)),
            PublicJwk.P256(ByteArray(32), ByteArray(32)))
        for (epk in bad) {
            val edited = WrappedKey(entry.kekId, entry.dekCipher, Scheme.EcdhEsA256kw(epk, scheme.recipient), "d", created)
            TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(Forger.blob(dek, listOf(edited), 1, null)) }
        }
    }

    @Test
    fun rsaKeysBelow2048BitsAreWeakAndAbove16384Malformed() {
        val generator = KeyPairGenerator.getInstance("RSA")
        generator.initialize(1024)
        val small = generator.generateKeyPair().public as RSAPublicKey
        val jwk = PublicJwk.Rsa(Crypto.unsigned(small.modulus), Crypto.unsigned(small.publicExponent))
        TestSupport.expectThrows<VaultException.WeakParameters> { runSuspending { PublicKeyRecipient(jwk).wrap(Crypto.randomBytes(32)) } }
        val entry = WrappedKey(jwk.thumbprint, Crypto.randomBytes(128), Scheme.RsaOaep256(jwk), "r", created)
        TestSupport.expectThrows<VaultException.WeakParameters> { VaultEnvelope.parse(Forger.blob(Crypto.randomBytes(32), listOf(entry), 1, null)) }
        val huge = PublicJwk.Rsa(byteArrayOf(1) + Crypto.randomBytes(2048), byteArrayOf(1, 0, 1))
        val hugeEntry = WrappedKey(huge.thumbprint, Crypto.randomBytes(2049), Scheme.RsaOaep256(huge), "r", created)
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(Forger.blob(Crypto.randomBytes(32), listOf(hugeEntry), 1, null)) }
    }

    @Test
    fun seedFormRsaReadsMgf1Sha1AsJavasDefaultWritesIt() {
        val rsa = RsaKek.generate()
        val dek = Crypto.randomBytes(32)
        // What an Android app writing the seed's code produces: no OAEPParameterSpec, so MGF1-SHA-1.
        val cipher = Cipher.getInstance("RSA/ECB/OAEPWithSHA-256AndMGF1Padding")
        cipher.init(Cipher.ENCRYPT_MODE, Crypto.rsaPublicKey(rsa.recipient.publicKey.let { (it as PublicJwk.Rsa).n }, (rsa.recipient.publicKey as PublicJwk.Rsa).e, "jwk"))
        val sha1Mgf = cipher.doFinal(dek)
        val seed = VaultSealer(InMemoryCounterStore()).sealSeedForm(TestSupport.plaintext, dek, listOf(WrappedKey(rsa.kekId, sha1Mgf, Scheme.Seed)))
        TestSupport.assertBytes(dek, runSuspending { rsa.unwrap(VaultEnvelope.parse(seed).entries.single()) })
        // The key reads it, but a reader takes no version without a vault identity through a public-key entry (§11.3).
        TestSupport.expectThrows<VaultException.UnconfirmedVault> { runSuspending { VaultOpener(InMemoryCounterStore()).open(seed, "s", listOf(rsa)) } }
        // An RSA-OAEP-256 entry is MGF1-SHA-256 only.
        val extended = WrappedKey(rsa.kekId, sha1Mgf, Scheme.RsaOaep256(rsa.recipient.publicKey as PublicJwk.Rsa), "r", created)
        TestSupport.expectThrows<VaultException.UnwrapFailed> { runSuspending { rsa.unwrap(extended) } }
    }

    // MARK: attack 6, seed-form entries sharing a kek_id

    @Test
    fun seedEntriesSharingAKekIdAreTriedInOrder() {
        val mine = AesGcmKek(Crypto.randomBytes(32), "vault-kek")
        val theirs = AesGcmKek(Crypto.randomBytes(32), "vault-kek")
        val dek = Crypto.randomBytes(32)
        val seed = VaultSealer(InMemoryCounterStore()).sealSeedForm(TestSupport.plaintext, dek, listOf(theirs.wrapSeedLayout(dek), mine.wrapSeedLayout(dek)))
        TestSupport.assertBytes(TestSupport.plaintext, runSuspending { VaultOpener(InMemoryCounterStore()).open(seed, "s", listOf(mine)) }.plaintext)
        TestSupport.assertBytes(TestSupport.plaintext, runSuspending { VaultOpener(InMemoryCounterStore()).open(seed, "s", listOf(theirs)) }.plaintext)
        val neither = AesGcmKek(Crypto.randomBytes(32), "vault-kek")
        TestSupport.expectThrows<VaultException.UnwrapFailed> { runSuspending { VaultOpener(InMemoryCounterStore()).open(seed, "s", listOf(neither)) } }
        // The first extended write re-wraps for this device's key once and reports the other vault-kek entry.
        val opened = runSuspending { VaultOpener(InMemoryCounterStore()).open(seed, "s", listOf(mine)) }
        val rotated = runSuspending { VaultSealer(InMemoryCounterStore()).seal(opened.plaintext, opened.state, listOf(mine)) }
        assertEquals(listOf("vault-kek"), rotated.state.entries.map { it.kekId })
        assertEquals(listOf(SkippedEntry("vault-kek", "", "keyNotAvailable")), rotated.skipped)
        TestSupport.assertBytes(TestSupport.plaintext, runSuspending { VaultOpener(InMemoryCounterStore()).open(rotated.blob, "s", listOf(mine)) }.plaintext)
        // A new Keystore key's id is unique per device: android- and 16 random bytes.
        val id = KeystoreKek.newKekId()
        assertTrue(Regex("android-[A-Za-z0-9_-]{22}").matches(id), id)
    }

    // MARK: what a second implementer had to guess

    @Test
    fun recoveryCodesSkipPastedWhitespaceAndNothingElse() {
        val code = RecoveryCode.generate()
        val kekId = RecoveryCodeKek(code).kekId
        val groups = code.formatted.split("-")
        for (separator in listOf("\t", "\n", "\r\n", "\u00A0", " - ", "")) {
            assertEquals(kekId, RecoveryCodeKek(RecoveryCode.parse(" " + groups.joinToString(separator) + "\n")).kekId, separator)
        }
        for (separator in listOf("\u2013", "\u3000", "_", ".")) {
            TestSupport.expectThrows<VaultException.InvalidRecoveryCode> { RecoveryCode.parse(groups.joinToString(separator)) }
        }
        val fullWidth = code.formatted.map { if (it in '0'..'9') (it - '0' + 0xFF10).toChar() else it }.joinToString("")
        if (fullWidth != code.formatted) TestSupport.expectThrows<VaultException.InvalidRecoveryCode> { RecoveryCode.parse(fullWidth) }
    }

    @Test
    fun numbersBeyondADoubleAreInvalidJsonAndNulInANameIsInvalidShape() {
        for (text in listOf("[1e400]", "[-1e400]", "{\"a\":1" + "0".repeat(400) + "}")) {
            try { Json.parse(text); throw AssertionError("$text parsed") } catch (e: JsonParseError) {}
        }
        Json.parse("[1e308, -237462374673276894279832749832423479823246327846, 1E22]")
        val dek = Crypto.randomBytes(32)
        val gcm = AesGcmKek(Crypto.randomBytes(32))
        val seed = VaultSealer(InMemoryCounterStore()).sealSeedForm(TestSupport.plaintext, dek, listOf(gcm.wrapSeedLayout(dek)))
        TestSupport.expectThrows<VaultException.InvalidJson> { VaultEnvelope.parse(TestSupport.edit(seed) { it["x"] = JsonValue.Number("1e400") }) }
        TestSupport.expectThrows<VaultException.InvalidShape> { VaultEnvelope.parse(TestSupport.edit(seed) { it["a\u0000b"] = Json.int(1) }) }
        TestSupport.expectThrows<VaultException.InvalidShape> {
            VaultEnvelope.parse(TestSupport.edit(seed) { m ->
                m["wrappedDeks"] = JsonValue.Arr(TestSupport.entries(m).map { TestSupport.withMember(it, "\u0000", Json.int(1)) })
            })
        }
        // Other names outside the seed's members are still ignored in the seed form.
        VaultEnvelope.parse(TestSupport.edit(seed) { it["x"] = Json.int(1) })
    }

    @Test
    fun aReaderRefusesATextAboveItsSizeLimitBeforeParsingIt() {
        val garbage = ByteArray(1_048_577) { 0x78.toByte() }
        TestSupport.expectThrows<VaultException.BlobTooLarge> { runSuspending { VaultOpener(InMemoryCounterStore()).open(garbage, "v", listOf(StoredKeyKek.generate())) } }
        TestSupport.expectThrows<VaultException.InvalidJson> { runSuspending { VaultOpener(InMemoryCounterStore()).open(garbage.copyOf(1000), "v", listOf(StoredKeyKek.generate())) } }
    }
}
