package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File
import java.nio.file.Files
import javax.crypto.spec.SecretKeySpec

/**
 * Builds blobs the way an attacker (the server, or anyone holding a member's public key) can: from public material
 * and a DEK of its own choice, with FORMAT.md §5 and §11.1 written out here by hand from the text.
 */
object Forger {
    class Anchor(val id: ByteArray, val epoch: Long, val secrets: List<ByteArray>)

    const val MAX_COUNTER = (1L shl 53) - 1
    private const val NOW = "2026-12-01T12:00:00.000Z"

    fun u64be(n: Long) = ByteArray(8) { (n ushr (56 - 8 * it)).toByte() }

    /** `iv ‖ GCM(Kₛ, iv, S…, AADₛ) ‖ tag`, Kₛ and AADₛ as §11.1 defines them. */
    fun sealSecrets(dek: ByteArray, anchor: Anchor): ByteArray {
        val domain = Crypto.utf8("WalletVault-v1 vault secret")
        val key = Crypto.hkdf(dek, ByteArray(0), domain, 32)
        val (iv, sealed) = Crypto.gcmSeal(key, Crypto.concat(*anchor.secrets.toTypedArray()), Crypto.concat(domain, byteArrayOf(0), anchor.id, u64be(anchor.epoch)))
        return iv + sealed
    }

    /** F(e) of §11.1. */
    fun fingerprint(id: ByteArray, epoch: Long, secret: ByteArray) =
        Crypto.sha256(Crypto.concat(Crypto.utf8("WalletVault-v1 anchor"), byteArrayOf(0), id, u64be(epoch), secret))

    /** A complete extended blob for [entries] (wrapping [dek]); anchored when [anchor] is given. */
    fun blob(dek: ByteArray, entries: List<WrappedKey>, counter: Long, anchor: Anchor?, plaintext: ByteArray = TestSupport.plaintext,
             secretSealedUnder: ByteArray = dek): ByteArray {
        val members = arrayListOf<Pair<String, JsonValue>>("v" to Json.int(1), "wrappedDeks" to JsonValue.Arr(entries.map { it.json }),
            "updatedUtc" to Json.str(NOW), "counter" to Json.int(counter), "dek_seals" to Json.int(1))
        if (anchor != null) {
            members.add("vault_id" to Json.str(Base64Url.encode(anchor.id)))
            members.add("epoch" to Json.int(anchor.epoch))
            members.add("vault_secret" to Json.str(Base64Url.encode(sealSecrets(secretSealedUnder, anchor))))
        }
        members.add("macs" to Json.str(Base64Url.encode(HeaderAuthenticator(dek).macs(JsonValue.Obj(members)))))
        val (iv, sealed) = Crypto.gcmSeal(dek, plaintext, HeaderAuthenticator.additionalData(JsonValue.Obj(members)))
        members.add("iv" to Json.str(Base64Url.encode(iv)))
        members.add("tag" to Json.str(Base64Url.encode(sealed.copyOfRange(sealed.size - 16, sealed.size))))
        members.add("cipher" to Json.str(Base64Url.encode(sealed.copyOfRange(0, sealed.size - 16))))
        return Json.write(JsonValue.Obj(members))
    }

    /** A blob made from nothing but [jwk] (a member's public key, as every blob shows it), with a DEK of the forger's. */
    fun fromPublicKey(jwk: PublicJwk, counter: Long, anchor: Anchor?, plaintext: ByteArray = Crypto.utf8("{\"items\":{}}")): ByteArray {
        val dek = Crypto.randomBytes(32)
        val entry = runSuspending { PublicKeyRecipient(jwk).wrap(dek) }.labeled("forged", NOW)
        return blob(dek, listOf(entry), counter, anchor, plaintext)
    }

    /** A blob with [key]'s own entry (a member writing with an old, pre-anchor writer, or a revoked member). */
    fun withKey(key: KeyWrapping, counter: Long, anchor: Anchor?): ByteArray {
        val dek = Crypto.randomBytes(32)
        val entry = runSuspending { key.wrap(dek) }.labeled("member", NOW)
        return blob(dek, listOf(entry), counter, anchor)
    }

    fun jwkOf(blob: ByteArray, kekId: String): PublicJwk = when (val s = VaultEnvelope.parse(blob).entries.single { it.kekId == kekId }.scheme) {
        is Scheme.EcdhEsA256kw -> s.recipient
        is Scheme.RsaOaep256 -> s.recipient
        else -> throw AssertionError("not a public-key entry")
    }
}

/** FORMAT.md §11: vault identity and writer authentication (issue 14 attacks 1, 2, 4 and 7). */
class AnchorTest {
    private val phone = StoredKeyKek.generate()          // the creator's key (symmetric: authenticates writers)
    private val paired = DeviceKek.generate()            // a paired device reading through an ECDH-ES entry
    private val recoveryCode = RecoveryCode.generate()
    private val phoneStore = InMemoryCounterStore()
    private val sealer = VaultSealer(phoneStore, hint = "Phone")
    private val created: SealedVault = runSuspending {
        sealer.create(TestSupport.plaintext, "v", listOf(Recipient(phone, "Phone"), Recipient(paired, "Pixel"),
            Recipient(RecoveryCodeKek(recoveryCode), "Recovery code")))
    }.also { sealer.markAccepted(it) }

    private fun open(store: InMemoryCounterStore, blob: ByteArray, key: KeyEncryptionKey, vault: String = "v") =
        runSuspending { VaultOpener(store).open(blob, vault, listOf(key)) }

    /** The paired device's store after the §11.4 confirmation with the approver's code. */
    private fun pairedStore(blob: ByteArray = created.blob, state: VaultState = created.state): InMemoryCounterStore {
        val store = InMemoryCounterStore()
        val opener = VaultOpener(store)
        val opened = runSuspending { opener.openUnconfirmed(blob, "v", listOf(paired)) }
        opener.confirmPairing(opened, "v", state.confirmationCode(paired.kekId, blob)!!)
        return store
    }

    private class Snapshot(store: InMemoryCounterStore) {
        val counter = store.highest("v")
        val anchor = store.anchor("v")
    }

    private fun assertUnchanged(before: Snapshot, store: InMemoryCounterStore) {
        assertEquals(before.counter, store.highest("v"), "the counter changed")
        assertEquals(before.anchor, store.anchor("v"), "the anchor changed")
    }

    // MARK: attack 1, forgery through a public-key entry

    @Test
    fun aBlobForgedFromAMembersPublicJwkWithTheHighestCounterIsRefusedAndStoresNothing() {
        val jwk = Forger.jwkOf(created.blob, paired.kekId)
        // The pre-anchor forgery of issue 14 (before §11 it opened and raised the counter to 2^53 − 1, locking the
        // reader out for ever). A reader with no anchor refuses it too (§11.3, issue 26): unconfirmedVault, nothing stored.
        val unpinned = InMemoryCounterStore()
        val preAnchor = Forger.fromPublicKey(jwk, Forger.MAX_COUNTER, null)
        TestSupport.expectThrows<VaultException.UnconfirmedVault> { open(unpinned, preAnchor, paired) }
        assertEquals(0L, unpinned.highest("v"), "a forged counter reached the counter store")
        assertNull(unpinned.anchor("v"))
        // An anchored forgery (its own vault_id and secret): unconfirmedVault for a reader with no anchor, nothing stored.
        val anchored = Forger.fromPublicKey(jwk, Forger.MAX_COUNTER, Forger.Anchor(Crypto.randomBytes(16), 1, listOf(Crypto.randomBytes(32))))
        TestSupport.expectThrows<VaultException.UnconfirmedVault> { open(unpinned, anchored, paired) }
        assertEquals(0L, unpinned.highest("v"))
        assertNull(unpinned.anchor("v"))

        // A pinned reader refuses every forgery before storing anything, and the genuine vault still opens after.
        val pinned = pairedStore()
        val before = Snapshot(pinned)
        assertEquals(created.state.anchor, before.anchor)
        val vid = VaultEnvelope.parse(created.blob).vaultIdentifier!!
        // At the highest counter it is refused before any key (issue 26 point 9: no room left for a write after it);
        // within reach of the reader's counter, by the writer check.
        val exhausting = Forger.fromPublicKey(jwk, Forger.MAX_COUNTER, Forger.Anchor(vid, 1, listOf(Crypto.randomBytes(32))))
        TestSupport.expectThrows<VaultException.CounterJump> { open(pinned, exhausting, paired) }
        assertUnchanged(before, pinned)
        for (epoch in listOf(1L, 2L, 17L)) {
            val sameVault = Forger.fromPublicKey(jwk, VaultOpener.MAX_COUNTER_STEP, Forger.Anchor(vid, epoch, List(VaultSecrets.carried(epoch)) { Crypto.randomBytes(32) }))
            val e = if (epoch < 17) TestSupport.expectThrows<VaultException.WriterNotMember> { open(pinned, sameVault, paired) }
                    else TestSupport.expectThrows<VaultException.UnconfirmedVault> { open(pinned, sameVault, paired) }
            assertFalse(e.message!!.contains("null"))
            assertUnchanged(before, pinned)
        }
        TestSupport.expectThrows<VaultException.WrongVault> { open(pinned, anchored, paired) }
        TestSupport.expectThrows<VaultException.Downgrade> { open(pinned, preAnchor, paired) }
        assertUnchanged(before, pinned)
        TestSupport.assertBytes(TestSupport.plaintext, open(pinned, created.blob, paired).plaintext)
        val next = runSuspending { sealer.seal(TestSupport.plaintext, created.state) }
        TestSupport.assertBytes(TestSupport.plaintext, open(pinned, next.blob, paired).plaintext)
        assertEquals(2L, pinned.highest("v"))
    }

    @Test
    fun aForgeryThroughASymmetricKeyItCannotMakeIsJustAWrongKey() {
        // The forger cannot wrap for a symmetric entry, so copying one into its blob fails the unwrap or the MACs.
        val genuine = VaultEnvelope.parse(created.blob).entries.first { it.kekId == phone.kekId }
        val dek = Crypto.randomBytes(32)
        val forged = Forger.blob(dek, listOf(genuine), Forger.MAX_COUNTER, null)
        val store = InMemoryCounterStore()
        TestSupport.expectThrows<VaultException.RecipientsAltered> { open(store, forged, phone) }
        assertEquals(0L, store.highest("v"))
    }

    // MARK: attack 2, cross-served vaults

    @Test
    fun anotherVaultOfTheSameKeyIsRefusedAsWrongVault() {
        // The phone's key is enrolled in two vaults; the server serves vault B's blob to a reader of vault A.
        val other = runSuspending { VaultSealer(InMemoryCounterStore()).create(Crypto.utf8("{\"items\":{}}"), "v", listOf(Recipient(phone, "Phone"))) }
        val reader = InMemoryCounterStore()
        open(reader, created.blob, phone)
        val before = Snapshot(reader)
        TestSupport.expectThrows<VaultException.WrongVault> { open(reader, other.blob, phone) }
        assertUnchanged(before, reader)
        // Also when vault B's counter is higher and its epoch too.
        var state = other.state
        repeat(3) { state = runSuspending { VaultSealer(InMemoryCounterStore()).rotateDek(TestSupport.plaintext, state, listOf(phone), rotateVaultSecret = true) }.state }
        TestSupport.expectThrows<VaultException.WrongVault> { open(reader, state.envelope.encoded(), phone) }
        assertUnchanged(before, reader)
        // And for a paired reader through its public-key entry, before its key is used.
        val pinned = pairedStore()
        val otherForPaired = runSuspending { VaultSealer(InMemoryCounterStore()).create(TestSupport.plaintext, "v", listOf(Recipient(PublicKeyRecipient(paired.publicKey), "Pixel"))) }
        TestSupport.expectThrows<VaultException.WrongVault> { open(pinned, otherForPaired.blob, paired) }
    }

    // MARK: attack 4, downgrade to the seed form or a pre-anchor blob

    @Test
    fun aPinnedReaderRefusesSeedAndPreAnchorBlobsAsDowngrade() {
        val reader = InMemoryCounterStore()
        open(reader, created.blob, phone)
        val before = Snapshot(reader)
        // The seed form, wrapped for the reader's own key (a pre-migration version the server kept).
        val dek = Crypto.randomBytes(32)
        val gcm = AesGcmKek(Crypto.randomBytes(32))
        val seed = VaultSealer(InMemoryCounterStore()).sealSeedForm(TestSupport.plaintext, dek, listOf(gcm.wrapSeedLayout(dek)))
        val gcmReader = InMemoryCounterStore()
        open(gcmReader, runSuspending { sealer.create(TestSupport.plaintext, "v", listOf(Recipient(gcm, "gcm"))) }.blob, gcm)
        TestSupport.expectThrows<VaultException.Downgrade> { open(gcmReader, seed, gcm) }
        // A pre-anchor extended blob with the reader's own entry and a counter far above: downgrade, not accepted.
        val preAnchor = Forger.withKey(phone, 1000, null)
        TestSupport.expectThrows<VaultException.Downgrade> { open(reader, preAnchor, phone) }
        assertUnchanged(before, reader)
        // A key that would prompt is never asked: the check comes before any key is used.
        val untouchable = FakeKeystore.kek(SecretKeySpec(Crypto.randomBytes(32), "AES"), phone.kekId, { _: javax.crypto.Cipher -> throw AssertionError("prompted") })
        TestSupport.expectThrows<VaultException.Downgrade> { runSuspending { VaultOpener(reader).open(preAnchor, "v", listOf(untouchable)) } }
        // A reader with no anchor still opens both (compatibility, §11.7), through its symmetric entry with the counter.
        val fresh = InMemoryCounterStore()
        open(fresh, preAnchor, phone)
        assertEquals(1000L, fresh.highest("v"))
        TestSupport.assertBytes(TestSupport.plaintext, open(InMemoryCounterStore(), seed, gcm).plaintext)
    }

    @Test
    fun anOlderEpochIsRefusedAsDowngradeEvenWithAHigherCounter() {
        val reader = InMemoryCounterStore()
        open(reader, created.blob, phone)
        val rotated = runSuspending { sealer.rotateDek(TestSupport.plaintext, created.state, listOf(phone), rotateVaultSecret = true) }
        assertEquals(2L, rotated.state.envelope.epoch)
        open(reader, rotated.blob, phone)
        assertEquals(2L, reader.anchor("v")!!.epoch)
        val before = Snapshot(reader)
        TestSupport.expectThrows<VaultException.Downgrade> { open(reader, created.blob, phone) }
        // An epoch-1 version written later (a higher counter) by someone who knew S_1: still the older epoch.
        val old = created.state
        val id = VaultEnvelope.parse(created.blob).vaultIdentifier!!
        val epochOne = Forger.withKey(phone, 50, Forger.Anchor(id, 1, old.exportVaultSecrets()))
        TestSupport.expectThrows<VaultException.Downgrade> { open(reader, epochOne, phone) }
        assertUnchanged(before, reader)
    }

    // MARK: §11.5 secret rotation, §11.6 fork

    @Test
    fun revokingRotatesTheSecretAndTheRevokedDevicesForkIsRefused() {
        val revoked = DeviceKek.generate()
        val laptop = DeviceKek.generate()
        val start = runSuspending { sealer.seal(TestSupport.plaintext, sealer.enroll(revoked, "Old phone", sealer.enroll(laptop, "Laptop", created.state))) }
        sealer.markAccepted(start)
        val member = pairedStore(start.blob, start.state)          // pinned at epoch 1
        val lagging = pairedStore(start.blob, start.state)         // pinned at epoch 1, does not read the revocation
        // The revoked device read epoch 1 (it knows the DEK and S_1).
        val revokedView = runSuspending { VaultOpener(InMemoryCounterStore().also { it.pin("v", start.state.anchor!!) }).open(start.blob, "v", listOf(revoked)) }

        val remaining = sealer.revoke(revoked.kekId, start.state)
        val genuine = runSuspending { sealer.rotateDek(TestSupport.plaintext, remaining, listOf(phone)) }
        sealer.markAccepted(genuine)
        val envelope = genuine.state.envelope
        assertEquals(2L, envelope.epoch)
        assertEquals(start.state.envelope.vaultIdentifier!!.toList(), envelope.vaultIdentifier!!.toList())
        assertEquals(2, genuine.state.exportVaultSecrets().size)
        TestSupport.assertBytes(start.state.exportVaultSecrets()[0], genuine.state.exportVaultSecrets()[0])
        assertFalse(genuine.state.exportDek().contentEquals(start.state.exportDek()), "a revocation rotates the DEK too")
        assertFalse(envelope.entries.any { it.kekId == revoked.kekId })
        TestSupport.expectThrows<VaultException.NoMatchingKey> { runSuspending { VaultOpener(InMemoryCounterStore()).open(genuine.blob, "v", listOf(revoked)) } }
        // A member pinned at epoch 1 checks S_1 and moves its anchor to epoch 2.
        open(member, genuine.blob, paired)
        assertEquals(genuine.state.anchor, member.anchor("v"))

        // The revoked device's own epoch 2 (its own S_2, re-wrapped for every public-key member), a higher counter.
        val forkSealer = VaultSealer(InMemoryCounterStore().also { it.advance("v", 100) })
        val fork = runSuspending { forkSealer.rotateDek(Crypto.utf8("{\"items\":{}}"), revokedView.state, listOf(revoked), rotateVaultSecret = true) }
        assertEquals(2L, fork.state.envelope.epoch)
        assertTrue(fork.state.envelope.entries.any { it.kekId == paired.kekId })
        val before = Snapshot(member)
        TestSupport.expectThrows<VaultException.WriterNotMember> { open(member, fork.blob, paired) }
        // Its epoch-1 fork is a downgrade for the member that read epoch 2.
        val forkAtOne = runSuspending { forkSealer.seal(Crypto.utf8("{\"items\":{}}"), revokedView.state) }
        TestSupport.expectThrows<VaultException.Downgrade> { open(member, forkAtOne.blob, paired) }
        assertUnchanged(before, member)
        // §11.6's remaining window, as documented: a member that has not read the revocation follows the fork ...
        open(lagging, fork.blob, paired)
        // ... and then refuses the genuine epoch 2 (here as a rollback, the fork's counter being higher); comparing
        // anchors between the two members shows the fork.
        TestSupport.expectThrows<VaultException.Rollback> { open(lagging, genuine.blob, paired) }
        assertNotEquals(member.anchor("v")!!.shortFingerprint, lagging.anchor("v")!!.shortFingerprint)
    }

    @Test
    fun sixteenSecretsAreCarriedAndAReaderFurtherBehindMustConfirmAgain() {
        val atOne = InMemoryCounterStore().also { open(it, created.blob, phone) }
        val alsoAtOne = InMemoryCounterStore().also { open(it, created.blob, phone) }
        var state = created.state
        val blobs = HashMap<Long, ByteArray>()
        for (epoch in 2L..17L) {
            val sealed = runSuspending { sealer.rotateDek(TestSupport.plaintext, state, listOf(phone), rotateVaultSecret = true) }
            state = sealed.state
            blobs[epoch] = sealed.blob
            assertEquals(epoch, state.envelope.epoch)
            assertEquals(minOf(epoch, 16L).toInt(), state.exportVaultSecrets().size)
            assertEquals(VaultSecrets.sealedLength(epoch), Base64Url.decode((state.envelope.header["vault_secret"] as JsonValue.Str).value)!!.size)
        }
        // Epoch 16 still carries S_1 ...
        open(atOne, blobs[16]!!, phone)
        assertEquals(16L, atOne.anchor("v")!!.epoch)
        // ... epoch 17 no longer does: a reader still at epoch 1 must confirm again, and nothing is stored.
        val before = Snapshot(alsoAtOne)
        TestSupport.expectThrows<VaultException.UnconfirmedVault> { open(alsoAtOne, blobs[17]!!, phone) }
        assertUnchanged(before, alsoAtOne)
        open(atOne, blobs[17]!!, phone)
        assertEquals(17L, atOne.anchor("v")!!.epoch)
    }

    // MARK: §11.4 pairing confirmation

    @Test
    fun pairingConfirmationPinsOnlyOnTheApproversCode() {
        val code = created.state.confirmationCode(paired.kekId, created.blob)!!
        assertTrue(Regex("\\d{3} \\d{3}").matches(code), code)
        val store = InMemoryCounterStore()
        val opener = VaultOpener(store)
        val opened = runSuspending { opener.openUnconfirmed(created.blob, "v", listOf(paired)) }
        TestSupport.assertBytes(TestSupport.plaintext, opened.plaintext)
        assertFalse(opened.authenticatedWriter)
        assertNull(store.anchor("v"), "opening for confirmation stores nothing")
        assertEquals(0L, store.highest("v"))
        // Mismatches (another code, another key's code, not a code) store nothing.
        val digits = code.replace(" ", "").toInt()
        val wrong = String.format(java.util.Locale.ROOT, "%06d", (digits + 1) % 1_000_000)
        for (typed in listOf(wrong, created.state.confirmationCode(DeviceKek.generate().kekId, created.blob)!!,
                created.state.confirmationCode(paired.kekId, created.blob + byteArrayOf(0x0A))!!, "12345", "abc def", "")) {
            if (typed.replace(" ", "") == code.replace(" ", "")) continue
            TestSupport.expectThrows<VaultException.PairingMismatch> { opener.confirmPairing(opened, "v", typed) }
            assertNull(store.anchor("v"))
            assertEquals(0L, store.highest("v"))
        }
        // A server's own blob for the new device (its own secret) gives another code: the user's code does not match.
        val forged = Forger.fromPublicKey(Forger.jwkOf(created.blob, paired.kekId), 5, Forger.Anchor(Crypto.randomBytes(16), 1, listOf(Crypto.randomBytes(32))))
        val forgedOpened = runSuspending { opener.openUnconfirmed(forged, "v", listOf(paired)) }
        TestSupport.expectThrows<VaultException.PairingMismatch> { opener.confirmPairing(forgedOpened, "v", code) }
        assertNull(store.anchor("v"))
        // The typed code matches (spaces and dashes ignored): pinned, counter accepted, later opens need no confirmation.
        opener.confirmPairing(opened, "v", code.replace(" ", "-"))
        assertEquals(created.state.anchor, store.anchor("v"))
        assertEquals(1L, store.highest("v"))
        open(store, created.blob, paired)
    }

    @Test
    fun theConfirmationCodeIsTheOneSection114Defines() {
        val id = created.state.envelope.vaultIdentifier!!
        val secret = created.state.exportVaultSecrets().last()
        val kekId = Crypto.utf8(paired.kekId)
        val mac = Crypto.hmac(secret, Crypto.concat(Crypto.utf8("WalletVault-v1 pairing confirmation v2"), byteArrayOf(0), id, Forger.u64be(1),
            Crypto.u32be(kekId.size), kekId, Crypto.sha256(created.blob)))
        val number = ((mac[0].toLong() and 0xFF) shl 24) or ((mac[1].toLong() and 0xFF) shl 16) or ((mac[2].toLong() and 0xFF) shl 8) or (mac[3].toLong() and 0xFF)
        val digits = String.format(java.util.Locale.ROOT, "%06d", number % 1_000_000)
        assertEquals(digits.substring(0, 3) + " " + digits.substring(3), created.state.confirmationCode(paired.kekId, created.blob))
        // The vector computed independently (Python): S_e = 32 × 0x11, vault_id = 0x00…0x0f, e = 3, kek_id "kid-example",
        // blob the 7 bytes {"v":1}.
        assertEquals("093 043", VaultSecrets.confirmationCode(ByteArray(32) { 0x11 }, ByteArray(16) { it.toByte() }, 3, "kid-example",
            Crypto.utf8("{\"v\":1}")))
        TestSupport.assertBytes(Forger.fingerprint(id, 1, secret), created.state.anchor!!.fingerprint)
    }

    // MARK: recovery through a symmetric entry

    @Test
    fun recoveryThroughARecoveryCodeOrPassphrasePinsTheAnchor() {
        val store = InMemoryCounterStore()
        open(store, created.blob, RecoveryCodeKek(RecoveryCode.parse(recoveryCode.formatted)))
        assertEquals(created.state.anchor, store.anchor("v"))
        assertEquals(1L, store.highest("v"))
        val passphrase = PassphraseKek.create("a long enough passphrase", Argon2Costs.FLOOR)
        val withPassphrase = runSuspending { sealer.seal(TestSupport.plaintext, sealer.enroll(passphrase, "Passphrase", created.state)) }
        val other = InMemoryCounterStore()
        open(other, withPassphrase.blob, PassphraseKek.unlock("a long enough passphrase", VaultEnvelope.parse(withPassphrase.blob)))
        assertEquals(created.state.anchor, other.anchor("v"))
        assertEquals(2L, other.highest("v"))
    }

    // MARK: compatibility and migration (§11.7)

    @Test
    fun preAnchorVectorsStillOpenAndTheFirstWriteMigrates() {
        val names = FormatVectorTest.names().filter {
            val blob = File(TestSupport.vectorDirectory, "$it.blob.json").readBytes()
            val key = FormatVectorTest.description(it)
            key["expect_error"] == null && !VaultEnvelope.parse(blob).isAnchored
        }
        assertTrue(names.size >= 9, names.toString())
        for (name in names) {
            val blob = File(TestSupport.vectorDirectory, "$name.blob.json").readBytes()
            val envelope = VaultEnvelope.parse(blob)
            val key = FormatVectorTest.key(FormatVectorTest.description(name), envelope)
            val store = InMemoryCounterStore()
            val opened = runSuspending { VaultOpener(store).open(envelope, "x", listOf(key)) }
            // The counter is kept only when the entry authenticates its writer (§11.3).
            val expected = if (envelope.isExtended && envelope.entries.first().scheme.authenticatesWriter) envelope.counter!! else 0L
            assertEquals(expected, store.highest("x"), name)
            assertNull(store.anchor("x"), name)
            // The first write mints vault_id and S_1 (epoch 1) and the writer pins them once the server accepted it.
            val writer = VaultSealer(store)
            val migrated = runSuspending { writer.seal(opened.plaintext, opened.state, listOf(key), allowingPrompts = true) }
            assertEquals(1L, migrated.state.envelope.epoch, name)
            assertNull(store.anchor("x"), "not before the upload was accepted")
            writer.markAccepted(migrated)
            assertEquals(migrated.state.anchor, store.anchor("x"), name)
            TestSupport.assertBytes(opened.plaintext, runSuspending { VaultOpener(store).open(migrated.blob, "x", listOf(key)) }.plaintext)
            // From then on the pre-anchor version is a downgrade for this reader.
            TestSupport.expectThrows<VaultException.Downgrade> { runSuspending { VaultOpener(store).open(envelope, "x", listOf(key)) } }
        }
    }

    // MARK: envelope rules of §11.1

    private fun edited(change: (LinkedHashMap<String, JsonValue>) -> Unit) = TestSupport.edit(created.blob, change)

    @Test
    fun theThreeMembersAppearTogetherOnlyInTheExtendedFormWithExactSizes() {
        for (name in VaultEnvelope.ANCHOR_MEMBERS) {
            TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(edited { it.remove(name) }) }
        }
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(edited { it.remove("vault_id"); it.remove("epoch") }) }
        val id = (VaultEnvelope.parse(created.blob).header["vault_id"] as JsonValue.Str).value
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(edited { it["vault_id"] = Json.str(Base64Url.encode(Crypto.randomBytes(15))) }) }
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(edited { it["vault_id"] = Json.str(Base64Url.encode(Crypto.randomBytes(17))) }) }
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(edited { it["vault_id"] = Json.str("$id=") }) }
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(edited { it["vault_id"] = Json.int(1) }) }
        for (bad in listOf(Json.int(0), Json.int(-1), Json.int(1L shl 53), Json.str("1"), JsonValue.Number("1.0"))) {
            TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(edited { it["epoch"] = bad }) }
        }
        // vault_secret must be 12 + 32·min(e, 16) + 16 bytes: an epoch of 2 with one secret is the wrong size.
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(edited { it["epoch"] = Json.int(2) }) }
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(edited { it["vault_secret"] = Json.str(Base64Url.encode(Crypto.randomBytes(59))) }) }
        TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(edited { it["vault_secret"] = Json.str("") }) }
        // Not in the seed form.
        val dek = Crypto.randomBytes(32)
        val gcm = AesGcmKek(Crypto.randomBytes(32))
        val seed = VaultSealer(InMemoryCounterStore()).sealSeedForm(TestSupport.plaintext, dek, listOf(gcm.wrapSeedLayout(dek)))
        for (name in VaultEnvelope.ANCHOR_MEMBERS) {
            val value = VaultEnvelope.parse(created.blob).header[name]!!
            TestSupport.expectThrows<VaultException.Malformed> { VaultEnvelope.parse(TestSupport.edit(seed) { it[name] = value }) }
        }
    }

    @Test
    fun alteredMembersAreCiphertextAlteredAndAVaultSecretThatDoesNotOpenIsMalformed() {
        val reader = InMemoryCounterStore()
        val secret = Base64Url.decode((VaultEnvelope.parse(created.blob).header["vault_secret"] as JsonValue.Str).value)!!
        secret[20] = (secret[20].toInt() xor 1).toByte()
        TestSupport.expectThrows<VaultException.CiphertextAltered> { open(reader, edited { it["vault_secret"] = Json.str(Base64Url.encode(secret)) }, phone) }
        TestSupport.expectThrows<VaultException.CiphertextAltered> { open(reader, edited { it["vault_id"] = Json.str(Base64Url.encode(Crypto.randomBytes(16))) }, phone) }
        assertEquals(0L, reader.highest("v"))
        assertNull(reader.anchor("v"))
        // A writer whose vault_secret does not open under Kₛ (covered by the AAD, so only a writer can do it): malformed.
        val dek = Crypto.randomBytes(32)
        val entry = runSuspending { phone.wrap(dek) }.labeled("x", "2026-12-01T12:00:00.000Z")
        val anchor = Forger.Anchor(Crypto.randomBytes(16), 1, listOf(Crypto.randomBytes(32)))
        val good = Forger.blob(dek, listOf(entry), 3, anchor)
        // The vault's own tag verifies (the AAD covers the bad vault_secret as written), but it is sealed under another key.
        val badSecret = Forger.blob(dek, listOf(entry), 3, anchor, secretSealedUnder = Crypto.randomBytes(32))
        TestSupport.expectThrows<VaultException.Malformed> { open(reader, badSecret, phone) }
        assertEquals(0L, reader.highest("v"))
        TestSupport.assertBytes(TestSupport.plaintext, open(InMemoryCounterStore(), good, phone).plaintext)
    }

    @Test
    fun writersPlaceTheMembersAfterDekSeals() {
        val names = (Json.parse(created.blob) as JsonValue.Obj).members.map { it.first }
        assertEquals(listOf("v", "wrappedDeks", "iv", "tag", "updatedUtc", "hint", "counter", "dek_seals", "vault_id", "epoch", "vault_secret", "macs", "cipher"), names)
        val envelope = VaultEnvelope.parse(created.blob)
        assertTrue(envelope.isAnchored)
        assertEquals(22, (envelope.header["vault_id"] as JsonValue.Str).value.length)
        assertEquals(1L, envelope.epoch)
        // Each vault gets its own vault_id and secret.
        val another = runSuspending { VaultSealer(InMemoryCounterStore()).create(TestSupport.plaintext, "v", listOf(Recipient(phone, "Phone"))) }
        assertFalse(another.state.envelope.vaultIdentifier!!.contentEquals(envelope.vaultIdentifier!!))
        // A seal with the same DEK keeps them; the vault_secret is sealed again with a fresh IV.
        val next = runSuspending { sealer.seal(TestSupport.plaintext, created.state) }
        assertEquals(created.state.anchor, next.state.anchor)
        assertNotEquals(envelope.header["vault_secret"], next.state.envelope.header["vault_secret"])
    }

    // MARK: persistence

    @Test
    fun localVaultStoreKeepsAnchorsBesideTheCountersSealed() {
        val directory: File = Files.createTempDirectory("wv-anchor").toFile()
        val key = SecretKeySpec(Crypto.randomBytes(32), "AES")
        val store = LocalVaultStore(directory, key)
        assertNull(store.anchors.anchor("v"))
        val anchor = created.state.anchor!!
        store.anchors.pin("v", anchor)
        val reopened = LocalVaultStore(directory, key)
        assertEquals(anchor, reopened.anchors.anchor("v"))
        // Never back to an older epoch of the same vault.
        val rotated = runSuspending { sealer.rotateDek(TestSupport.plaintext, created.state, listOf(phone), rotateVaultSecret = true) }.state.anchor!!
        reopened.anchors.pin("v", rotated)
        reopened.anchors.pin("v", anchor)
        assertEquals(rotated, LocalVaultStore(directory, key).anchors.anchor("v"))
        assertTrue(File(directory, "state.sealed").exists())
        assertFalse(String(File(directory, "state.sealed").readBytes(), Charsets.ISO_8859_1).contains(anchor.idText))
        // A reader over the store refuses what the anchor excludes, after a restart.
        TestSupport.expectThrows<VaultException.Downgrade> { runSuspending { VaultOpener(reopened.counters, reopened.anchors).open(created.blob, "v", listOf(phone)) } }
        directory.deleteRecursively()
    }
}
