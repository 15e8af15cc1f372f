package com.walletvault

/** Remembers the highest counter accepted per vault (FORMAT.md §8 step 3, §9). */
interface CounterStore {
    fun highest(vaultId: String): Long
    /** Raises the stored counter to [counter]; never lowers it. */
    fun advance(vaultId: String, counter: Long)
    /** The digest ([VersionDigests]) of the version accepted or written at [counter], if it is among those kept. */
    fun acceptedDigest(vaultId: String, counter: Long): ByteArray?
    /** Whether a version with [digest] was accepted or written for [vaultId] (among those kept). */
    fun hasSeen(vaultId: String, digest: ByteArray): Boolean
    /** Remembers the digest of a version accepted or written at [counter]; the newest [VersionDigests.KEPT] are kept. */
    fun remember(vaultId: String, counter: Long, digest: ByteArray)
}

/**
 * FORMAT.md §11.7 (Swift `SeenVersions`): what a reader keeps of each version it accepted or wrote,
 * `SHA-256("WalletVault-v1 version digest" ‖ 0x00 ‖ AAD ‖ iv ‖ tag)` (§5.3's AAD), per counter, the newest [KEPT].
 */
object VersionDigests {
    /** More than the server's history (10 by default). */
    const val KEPT = 64
    /** A digest is a SHA-256. */
    const val BYTES = 32
    private val DOMAIN = Crypto.utf8("WalletVault-v1 version digest") + byteArrayOf(0)

    /** The digest of [envelope]; null for the seed form, which has no counter. */
    fun of(envelope: VaultEnvelope): ByteArray? {
        if (envelope.counter == null || envelope.macs == null) return null
        return Crypto.sha256(Crypto.concat(DOMAIN, HeaderAuthenticator.additionalData(envelope.header), envelope.iv, envelope.tag))
    }

    /** [seen] with [digest] at [counter], the lowest counters dropped past [KEPT]. */
    internal fun adding(seen: Map<Long, ByteArray>, counter: Long, digest: ByteArray): Map<Long, ByteArray> {
        val updated = java.util.TreeMap<Long, ByteArray>(seen)
        updated[counter] = digest.copyOf()
        while (updated.size > KEPT) updated.remove(updated.firstKey())
        return updated
    }

    internal fun contains(seen: Map<Long, ByteArray>?, digest: ByteArray): Boolean =
        seen?.values?.any { Crypto.constantTimeEquals(it, digest) } ?: false
}


/** What an open or a seal leaves for the next seal: the DEK, the entries, the counters, the vault secrets. */
class VaultState internal constructor(
    val vaultId: String,
    val envelope: VaultEnvelope,
    val entries: List<WrappedKey>,
    internal val dek: ByteArray,
    /** §11: null for a seed-form or pre-anchor blob (the next write mints them). */
    internal val secrets: VaultSecrets? = null,
    /** §11.5: the next write draws a new vault secret (a revocation). */
    internal val rotateSecret: Boolean = false
) {
    /** A copy of the DEK (secret): for writing test vectors and for tools; apps never need it. */
    internal fun exportDek(): ByteArray = dek.copyOf()
    val counter: Long get() = envelope.counter ?: 0
    val dekSeals: Long get() = envelope.dekSeals ?: 0
    /** The anchor `(vault_id, e, F(e))` of this version, or null before the vault has one (§11.2). */
    val anchor: VaultAnchor? get() = secrets?.anchor
    /**
     * §11.4: the code the approver shows after saving a new device's entry, over [blob] (this version's exact bytes,
     * as saved) and [kekId] (the `kek_id` of the new device's entry); null before the vault has an anchor.
     */
    fun confirmationCode(kekId: String, blob: ByteArray): String? = secrets?.confirmationCode(kekId, blob)
    /** The vault secrets (secret): for writing test vectors and for tools; apps never need them. */
    fun exportVaultSecrets(): List<ByteArray> = secrets?.secrets?.map { it.copyOf() } ?: emptyList()
    internal fun withEntries(entries: List<WrappedKey>) = VaultState(vaultId, envelope, entries, dek, secrets, rotateSecret)
    internal fun rotatingSecret() = VaultState(vaultId, envelope, entries, dek, secrets, true)
}

/**
 * An opened blob. [authenticatedWriter] says whether the entry it opened through proves its writer held that
 * entry's key (§11.2); [kekId] is that entry's `kek_id`. [blob] is the exact text opened when the opener was given
 * bytes (what a §11.4 confirmation code covers), null when it was given a parsed [VaultEnvelope].
 */
class OpenedVault(val plaintext: ByteArray, val state: VaultState, val authenticatedWriter: Boolean = true,
                  val kekId: String = "", blob: ByteArray? = null) {
    private val blobBytes = blob?.copyOf()
    val blob: ByteArray? get() = blobBytes?.copyOf()
}

/**
 * Opens blobs of either form with the checks of FORMAT.md §8 and §11.3, in their order, and stores the counter
 * and anchor only after every check passed.
 */
class VaultOpener(
    private val counters: CounterStore,
    private val anchors: AnchorStore = counters as? AnchorStore
        ?: throw IllegalArgumentException("pass the AnchorStore kept beside this CounterStore"),
    /** The reader's own size limit (FORMAT.md §12): the server's default `limits.max_blob_bytes`. */
    val maxBlobBytes: Int = 1_048_576
) {
    suspend fun open(blob: ByteArray, vaultId: String, keys: List<KeyEncryptionKey>): OpenedVault =
        open(parse(blob), vaultId, keys, blob)

    companion object {
        /**
         * How far above the highest accepted counter a blob may be (2^20): writers add 1 per version, so an honest
         * chain gets there only after a million saves, while a counter near 2^53 − 1 would end every later write.
         */
        const val MAX_COUNTER_STEP = 1L shl 20
    }

    /** A text longer than [maxBlobBytes] is refused before it is parsed (`blobTooLarge`). */
    private fun parse(blob: ByteArray): VaultEnvelope {
        if (blob.size > maxBlobBytes) throw VaultException.BlobTooLarge("the blob is ${blob.size} bytes; this reader reads at most $maxBlobBytes bytes")
        return VaultEnvelope.parse(blob)
    }

    suspend fun open(envelope: VaultEnvelope, vaultId: String, keys: List<KeyEncryptionKey>): OpenedVault = open(envelope, vaultId, keys, null)

    private suspend fun open(envelope: VaultEnvelope, vaultId: String, keys: List<KeyEncryptionKey>, blob: ByteArray?): OpenedVault {
        val opened = verify(envelope, vaultId, keys, Mode.OPEN, blob)
        val counter = envelope.counter
        // After the tag (verify), so that an edited copy is named for what was edited; a valid second version is a fork.
        val digest = checkNotForked(envelope, vaultId)
        val secrets = opened.state.secrets
        if (secrets != null) {
            // §11.3 step 3: the anchor moves forward, then the counter.
            anchors.pin(vaultId, secrets.anchor)
            counters.advance(vaultId, counter!!)
        } else if (counter != null) {
            // A pre-anchor extended blob (only with no anchor pinned, and only through an entry that authenticates its
            // writer: verify refuses it otherwise), so a forged 2^53 − 1 through a public-key entry never gets here.
            counters.advance(vaultId, counter)
        }
        if (counter != null && digest != null) counters.remember(vaultId, counter, digest)
        return opened
    }

    /**
     * §11.7: `forkDetected` when another version's digest is kept at [envelope]'s counter, or (§11.10) when the one kept
     * just below it is not the version [envelope] names as `previous`; returns its digest.
     */
    private fun checkNotForked(envelope: VaultEnvelope, vaultId: String): ByteArray? {
        val counter = envelope.counter ?: return null
        val digest = VersionDigests.of(envelope) ?: return null
        val known = counters.acceptedDigest(vaultId, counter)
        if (known != null && !Crypto.constantTimeEquals(known, digest))
            throw VaultException.ForkDetected("another version than the one this device accepted at counter $counter: the server serves two")
        val below = if (counter > 1) counters.acceptedDigest(vaultId, counter - 1) else null
        val previous = envelope.previous
        if (below != null && (previous == null || !Crypto.constantTimeEquals(below, previous)))
            throw VaultException.ForkDetected("version $counter does not follow the version ${counter - 1} this device accepted: the server serves a fork")
        return digest
    }

    /**
     * §11.4, the new device's side: every check of [open] except that an anchored blob read through a
     * public-key entry is not refused `unconfirmedVault`; nothing is stored. Pass the result to [confirmPairing].
     */
    suspend fun openUnconfirmed(blob: ByteArray, vaultId: String, keys: List<KeyEncryptionKey>): OpenedVault =
        verify(parse(blob), vaultId, keys, Mode.CONFIRM, blob)

    /**
     * §11.4: pins the anchor of [opened] (from [openUnconfirmed]) and accepts its counter only if [typedCode] is the
     * code computed from its vault secret, the exact blob opened and the `kek_id` of the entry it was opened through
     * (this device's entry, of any key kind); `pairingMismatch` otherwise, and nothing is stored. The codes are
     * compared in constant time.
     */
    fun confirmPairing(opened: OpenedVault, vaultId: String, typedCode: String) {
        val secrets = opened.state.secrets ?: throw VaultException.UnconfirmedVault("the blob has no vault secret to confirm")
        val blob = opened.blob ?: throw IllegalArgumentException("confirm a vault opened by openUnconfirmed (from the blob's bytes)")
        val typed = VaultSecrets.normalizeCode(typedCode) ?: throw VaultException.PairingMismatch("the code must be six digits")
        val expected = VaultSecrets.normalizeCode(secrets.confirmationCode(opened.kekId, blob))!!
        if (!Crypto.constantTimeEquals(Crypto.utf8(typed), Crypto.utf8(expected)))
            throw VaultException.PairingMismatch("the code typed is not the one computed from the vault the server sent")
        // What is stored may have moved on while the user typed: the checks that need no key, against it now.
        val pinned = anchors.anchor(vaultId)
        if (pinned != null) {
            if (!pinned.sameVault(secrets.id)) throw VaultException.WrongVault("the blob's vault_id ${secrets.idText} is not this vault's (${pinned.idText})")
            if (secrets.epoch < pinned.epoch) throw VaultException.Downgrade("the blob's epoch ${secrets.epoch} is below the pinned epoch ${pinned.epoch}")
            val carried = secrets.secret(pinned.epoch)
            if (carried != null && !Crypto.constantTimeEquals(VaultSecrets.fingerprint(pinned.id, pinned.epoch, carried), pinned.fingerprint))
                throw VaultException.WriterNotMember("the blob's vault secret of epoch ${pinned.epoch} is not the pinned one")
        }
        val highest = counters.highest(vaultId)
        if (opened.state.counter < highest) throw VaultException.Rollback("blob counter ${opened.state.counter} is below $highest, already accepted for this vault")
        val digest = checkNotForked(opened.state.envelope, vaultId)
        anchors.pin(vaultId, secrets.anchor)
        counters.advance(vaultId, opened.state.counter)
        if (digest != null) counters.remember(vaultId, opened.state.counter, digest)
    }

    /**
     * An older version (a restore of it): every check of [open] but the counter's, and a pinned reader also takes a
     * pre-anchor version from before the migration, if it opens through an entry that authenticates its writer and
     * its writer was a member of the version [current] (checked through the secrets [current] carries) and this device
     * accepted or wrote it. A version from an epoch before [current]'s (before the last revocation) counts only if this
     * device accepted or wrote it (its digest is kept, §11.7): a revoked device knew those epochs' secrets. Stores nothing.
     */
    suspend fun openPastVersion(blob: ByteArray, vaultId: String, keys: List<KeyEncryptionKey>, current: VaultState): OpenedVault {
        val envelope = parse(blob)
        val opened = verify(envelope, vaultId, keys, Mode.PAST, blob)
        val carried = current.secrets
        val old = opened.state.secrets
        val seen = VersionDigests.of(envelope)?.let { counters.hasSeen(vaultId, it) } ?: false
        if (old == null) {
            if (carried != null && !opened.authenticatedWriter) throw VaultException.Downgrade("a version without vault_id read through a public-key entry")
            if (carried != null && !seen) throw VaultException.Downgrade("that version predates the vault identity and this device never accepted it")
        } else if (carried != null) {
            if (!carried.anchor.sameVault(old.id)) throw VaultException.WrongVault("the old version's vault_id is not this vault's")
            val mine = carried.secret(old.epoch) ?: throw VaultException.UnconfirmedVault("the old version's epoch ${old.epoch} is no longer carried")
            if (!Crypto.constantTimeEquals(mine, old.secrets.last())) throw VaultException.WriterNotMember("the old version's vault secret is not this vault's")
            if (old.epoch != carried.epoch && !seen) throw VaultException.Downgrade("that version is from epoch ${old.epoch}, before the last " +
                "revocation (epoch ${carried.epoch}), and this device never accepted it: a removed device could have written it")
        }
        return opened
    }

    private enum class Mode { OPEN, CONFIRM, PAST }

    private suspend fun verify(envelope: VaultEnvelope, vaultId: String, keys: List<KeyEncryptionKey>, mode: Mode, blob: ByteArray?): OpenedVault {
        val pinned = anchors.anchor(vaultId)
        val counter = envelope.counter
        // §11.3 step 1, before any key is used: a pinned reader refuses pre-anchor blobs, other vaults, older epochs.
        if (pinned != null && mode != Mode.PAST) {
            val id = envelope.vaultIdentifier ?: throw VaultException.Downgrade(
                if (counter == null) "a seed-form blob after this vault's anchor was pinned" else "a blob without vault_id after this vault's anchor was pinned")
            if (!pinned.sameVault(id)) throw VaultException.WrongVault("the blob's vault_id ${Base64Url.encode(id)} is not this vault's (${pinned.idText})")
            if (envelope.epoch!! < pinned.epoch) throw VaultException.Downgrade("the blob's epoch ${envelope.epoch} is below the pinned epoch ${pinned.epoch}")
        }
        if (pinned != null && mode == Mode.PAST) {
            val id = envelope.vaultIdentifier
            if (id != null && !pinned.sameVault(id)) throw VaultException.WrongVault("the blob's vault_id ${Base64Url.encode(id)} is not this vault's (${pinned.idText})")
        }
        // §8 step 3, before any key is touched: a replayed blob never prompts the user.
        if (mode != Mode.PAST) {
            val highest = counters.highest(vaultId)
            if (counter != null && counter < highest) throw VaultException.Rollback("blob counter $counter is below $highest, already accepted for this vault")
            if (counter == null && highest > 0) throw VaultException.Rollback("a seed-form blob (no counter) after counter $highest was accepted")
            if (counter != null && highest > 0 && counter - highest > MAX_COUNTER_STEP)
                throw VaultException.CounterJump("blob counter $counter is more than $MAX_COUNTER_STEP above $highest, the highest accepted")
        }
        // Step 4: the first key (in the order offered) with an entry decides; entries for keys this device does not
        // hold are skipped. Seed-form entries sharing a kek_id (every seed-era Android device used "vault-kek") are
        // tried in blob order until one unwraps (§4.2); any failure but unwrapFailed stops at once.
        val key = keys.firstOrNull { k -> envelope.entries.any { it.kekId == k.kekId } }
            ?: throw VaultException.NoMatchingKey("none of the ${keys.size} keys has an entry")
        var entry: WrappedKey? = null
        var payload: ByteArray? = null
        var failure: VaultException.UnwrapFailed? = null
        for (candidate in envelope.entries) {
            if (candidate.kekId != key.kekId) continue
            try {
                payload = key.unwrap(candidate)
                entry = candidate
                break
            } catch (e: VaultException.UnwrapFailed) {
                failure = e
            }
        }
        if (payload == null || entry == null) throw failure ?: VaultException.UnwrapFailed("no entry unwraps")
        // A seed-form entry names no algorithm: the key that unwrapped it says (Swift: `entry.algorithm ?? key.algorithm`).
        val symmetric = if (entry.scheme is Scheme.Seed) Scheme.algorithmAuthenticatesWriter(key.alg) else entry.scheme.authenticatesWriter
        val (dek, binding) = WrapBinding.split(payload, symmetric)
        val plaintext: ByteArray
        var secrets: VaultSecrets? = null
        if (counter != null) {
            HeaderAuthenticator(dek).verify(envelope.macs!!, envelope.header)
            plaintext = Crypto.gcmOpen(dek, envelope.iv, envelope.ciphertext + envelope.tag, HeaderAuthenticator.additionalData(envelope.header))
                ?: throw VaultException.CiphertextAltered("the vault ciphertext, IV or tag does not verify")
            // §11.3 step 2: the vault secret, after the vault's tag verified.
            val id = envelope.vaultIdentifier
            if (id != null) secrets = VaultSecrets.open(dek, id, envelope.epoch!!, envelope.sealedVaultSecret!!)
        } else {
            plaintext = Crypto.gcmOpen(dek, envelope.iv, envelope.ciphertext + envelope.tag, null)
                ?: throw VaultException.CiphertextAltered("the vault ciphertext, IV or tag does not verify")
        }
        val authenticated = WrapBinding.provesWriter(binding, symmetric, secrets)
        if (secrets != null && mode != Mode.PAST) {
            if (pinned != null) {
                val carried = secrets.secret(pinned.epoch)
                if (carried == null) {
                    if (mode == Mode.OPEN) throw VaultException.UnconfirmedVault(
                        "the blob (epoch ${secrets.epoch}) no longer carries the secret of the pinned epoch ${pinned.epoch}: confirm this device again")
                } else if (!Crypto.constantTimeEquals(VaultSecrets.fingerprint(pinned.id, pinned.epoch, carried), pinned.fingerprint)) {
                    throw VaultException.WriterNotMember("the blob's vault secret of epoch ${pinned.epoch} is not the pinned one: its writer is not a member")
                }
            } else if (!authenticated && mode == Mode.OPEN) {
                throw VaultException.UnconfirmedVault("an anchored blob read through a ${entry.scheme.alg} entry with no anchor pinned: confirm pairing first")
            }
        }
        // §11.3: a blob without vault_id (seed form or pre-anchor; it gets here only with nothing pinned) is taken only
        // through an entry that authenticates its writer: anyone who knows a public key can write the rest.
        if (secrets == null && !authenticated && mode == Mode.OPEN)
            throw VaultException.UnconfirmedVault("a version without a vault identity read through a public-key entry proves no writer: " +
                "a member device must write the vault first, then confirm this device")
        return OpenedVault(plaintext, VaultState(vaultId, envelope, envelope.entries, dek, secrets), authenticated, entry.kekId, blob)
    }
}

/** A recipient with its entry's label. */
class Recipient(val key: KeyWrapping, val label: String)

/** An entry a DEK rotation could not re-wrap. */
data class SkippedEntry(val kekId: String, val label: String, val reason: String)

/** A sealed version; [basis] holds the secrets of the version it replaces (null for a new vault), whose write key proves
 * to the server that the writer may replace it (FORMAT.md §11.8). */
class SealedVault(val blob: ByteArray, val state: VaultState, val skipped: List<SkippedEntry>? = null, internal val basis: VaultSecrets? = null)

/** Writes blobs in the extended form (FORMAT.md §9), or in the seed form for the seed's readers. */
class VaultSealer(
    private val counters: CounterStore,
    val hint: String? = null,
    val maxBlobBytes: Int = 1_048_576,
    val dekRotationThreshold: Long = 1L shl 24,
    private val clock: () -> Long = { UtcTime.now() },
    /** Where [markAccepted] pins the anchor of what this device wrote (§11.2); by default the counter store. */
    private val anchors: AnchorStore = counters as? AnchorStore
        ?: throw IllegalArgumentException("pass the AnchorStore kept beside this CounterStore")
) {
    /** A new vault: a new DEK, and a new `vault_id` and vault secret `S_1` (§11.1). */
    suspend fun create(plaintext: ByteArray, vaultId: String, recipients: List<Recipient>): SealedVault {
        val dek = Crypto.randomBytes(32)
        val now = UtcTime.formatted(clock())
        val secrets = VaultSecrets.mint()
        val entries = recipients.map { it.key.wrap(WrapBinding.payload(dek, it.key, secrets)).labeled(it.label, now) }
        return write(plaintext, dek, entries, vaultId, 0, 1, null, secrets, null, null)
    }

    /**
     * The next version with the same DEK, rotating it first when due (seed form, 2^24 seals, or after [revoke]: a
     * new vault secret sealed under the old DEK would reach the revoked device).
     */
    suspend fun seal(plaintext: ByteArray, over: VaultState, keys: List<KeyWrapping> = emptyList(), allowingPrompts: Boolean = false): SealedVault {
        if (!over.envelope.isExtended || over.rotateSecret || over.dekSeals >= dekRotationThreshold) return rotateDek(plaintext, over, keys, allowingPrompts)
        return write(plaintext, over.dek, over.entries, over.vaultId, over.counter, over.dekSeals + 1, null, nextSecrets(over), over.secrets,
            VersionDigests.of(over.envelope))
    }

    /**
     * The vault secrets the next version carries: the same ones; a pre-anchor vault's first `vault_id` and `S_1`
     * (§11.7 migration); after a revocation ([revoke], or [rotateVaultSecret] true) `S_{e+1}` too (§11.5).
     */
    private fun nextSecrets(over: VaultState, rotate: Boolean = false): VaultSecrets {
        val current = over.secrets ?: return VaultSecrets.mint()
        return if (rotate || over.rotateSecret) current.rotated() else current
    }

    /**
     * A fresh DEK, re-wrapped for every entry a key in [keys] or the entry's own `jwk` can wrap; with
     * [rotateVaultSecret] (or after [revoke]) a new vault secret too, epoch + 1 (§11.5).
     */
    suspend fun rotateDek(plaintext: ByteArray, over: VaultState, keys: List<KeyWrapping>, allowingPrompts: Boolean = false,
                          rotateVaultSecret: Boolean = false): SealedVault {
        val dek = Crypto.randomBytes(32)
        val now = UtcTime.formatted(clock())
        // The new secrets first: the symmetric entries are bound to the epoch they are written for.
        val secrets = nextSecrets(over, rotateVaultSecret)
        val entries = ArrayList<WrappedKey>()
        val skipped = ArrayList<SkippedEntry>()
        for (entry in over.entries) {
            val label = entry.label ?: over.envelope.hint ?: ""
            // Seed entries may share a kek_id (Android's constant "vault-kek"): one key re-wraps once, and the other
            // devices' entries under the same id are reported, since their keys are not here (FORMAT.md §4.2).
            if (entries.any { it.kekId == entry.kekId }) { skipped.add(SkippedEntry(entry.kekId, label, "keyNotAvailable")); continue }
            val key = keys.firstOrNull { it.kekId == entry.kekId } ?: PublicKeyRecipient.of(entry)
            if (key == null) { skipped.add(SkippedEntry(entry.kekId, label, "keyNotAvailable")); continue }
            if (!key.canWrapWithoutHolder && !allowingPrompts) { skipped.add(SkippedEntry(entry.kekId, label, "needsHolder")); continue }
            try {
                entries.add(key.wrap(WrapBinding.payload(dek, key, secrets)).labeled(label, entry.created ?: now))
            } catch (e: VaultException) {
                skipped.add(SkippedEntry(entry.kekId, label, e.code))
            }
        }
        return write(plaintext, dek, entries, over.vaultId, over.counter, 1, skipped, secrets, over.secrets, VersionDigests.of(over.envelope))
    }

    /** Wraps the DEK for one more key; the next seal writes the entry. */
    suspend fun enroll(key: KeyWrapping, label: String, state: VaultState): VaultState {
        if (state.entries.any { it.kekId == key.kekId }) throw VaultException.NoRecipients("the vault already has an entry for this kek_id")
        val payload = WrapBinding.payload(state.dek, key, state.secrets)
        return state.withEntries(state.entries + key.wrap(payload).labeled(label, UtcTime.formatted(clock())))
    }

    /**
     * Removes another device's entry (a revocation): the next write also rotates the vault secret (§11.5); rotate
     * the DEK with it ([rotateDek]). [rotatingSecret] false only removes the entry: for this device's own entries (its
     * single-use pairing key, a key the platform destroyed), which no one else held.
     */
    fun revoke(kekId: String, state: VaultState, rotatingSecret: Boolean = true): VaultState {
        val remaining = state.entries.filter { it.kekId != kekId }
        if (remaining.size == state.entries.size) throw VaultException.NoRecipients("the vault has no entry for this kek_id")
        if (remaining.isEmpty()) throw VaultException.NoRecipients("cannot revoke the last entry")
        val changed = state.withEntries(remaining)
        return if (rotatingSecret) changed.rotatingSecret() else changed
    }

    /**
     * Call after the server accepted [sealed]; a failed upload leaves the counter and anchor stores unchanged. The
     * writer is a member (it drew or opened the secret), so it pins what it wrote, then raises its counter.
     * Throws what the counter and anchor stores throw.
     */
    fun markAccepted(sealed: SealedVault) = markAccepted(sealed.state)

    /**
     * As [markAccepted] for a sealed version, from its [state]: for a version this device sealed and kept the exact
     * bytes of, opened again because the answer to its upload was lost. Throws what the counter and anchor stores throw.
     */
    internal fun markAccepted(state: VaultState) {
        state.secrets?.let { anchors.pin(state.vaultId, it.anchor) }
        val counter = state.envelope.counter ?: return
        counters.advance(state.vaultId, counter)
        VersionDigests.of(state.envelope)?.let { counters.remember(state.vaultId, counter, it) }
    }

    /** [previousDigest] is the digest of the version sealed over (§11.10), null for a new vault. */
    private fun write(plaintext: ByteArray, dek: ByteArray, entries: List<WrappedKey>, vaultId: String, previous: Long,
                      dekSeals: Long, skipped: List<SkippedEntry>?, secrets: VaultSecrets, basis: VaultSecrets?, previousDigest: ByteArray?): SealedVault {
        if (entries.isEmpty()) throw VaultException.NoRecipients("no entry can unwrap the DEK")
        if (entries.map { it.kekId }.toSet().size != entries.size) throw VaultException.NoRecipients("two entries have the same kek_id")
        val tooLong = { text: String? -> text != null && text.codePointCount(0, text.length) > WrappedKey.MAX_LABEL_CHARACTERS }
        if (entries.any { tooLong(it.label) } || tooLong(hint)) throw VaultException.Malformed("labels and the hint have at most 256 code points")
        // Nor a set of passphrase entries a reader would refuse to derive for (FORMAT.md §7.3).
        Argon2Costs.checkOpenBudget(entries.mapNotNull { (it.scheme as? Scheme.A256kwPassphrase)?.costs })
        val counter = maxOf(previous, counters.highest(vaultId)) + 1
        if (counter >= (1L shl 53)) throw VaultException.Malformed("the next counter would exceed 2^53 - 1")
        val members = arrayListOf<Pair<String, JsonValue>>(
            "v" to Json.int(1), "wrappedDeks" to JsonValue.Arr(entries.map { it.json }), "updatedUtc" to Json.str(UtcTime.formatted(clock())))
        hint?.let { members.add("hint" to Json.str(it)) }
        members.add("counter" to Json.int(counter))
        members.add("dek_seals" to Json.int(dekSeals))
        val sealedSecret = secrets.seal(dek)
        members.add("vault_id" to Json.str(secrets.idText))
        members.add("epoch" to Json.int(secrets.epoch))
        members.add("vault_secret" to Json.str(Base64Url.encode(sealedSecret)))
        previousDigest?.let { members.add("previous" to Json.str(Base64Url.encode(it))) }
        val macs = HeaderAuthenticator(dek).macs(JsonValue.Obj(members))
        members.add("macs" to Json.str(Base64Url.encode(macs)))
        val header = JsonValue.Obj(members)
        val (iv, sealed) = Crypto.gcmSeal(dek, plaintext, HeaderAuthenticator.additionalData(header))
        val envelope = VaultEnvelope(entries, iv, sealed.copyOfRange(sealed.size - 16, sealed.size), sealed.copyOfRange(0, sealed.size - 16),
            (header["updatedUtc"] as JsonValue.Str).value, hint, counter, dekSeals, macs, header, secrets.id, secrets.epoch, sealedSecret, previousDigest)
        val blob = envelope.encoded()
        if (blob.size > maxBlobBytes) throw VaultException.BlobTooLarge("the blob would be ${blob.size} bytes; the server accepts at most $maxBlobBytes bytes")
        return SealedVault(blob, VaultState(vaultId, envelope, entries, dek, secrets), skipped, basis)
    }

    /**
     * A blob in the seed's form (§2): no counter, no AAD, entries with only `kek_id` and `dek_cipher` (use
     * [KeystoreKek.wrapSeedLayout] / [AesGcmKek.wrapSeedLayout] for the seed's Android layout). For seed readers only.
     */
    fun sealSeedForm(plaintext: ByteArray, dek: ByteArray, entries: List<WrappedKey>, hint: String? = this.hint): ByteArray {
        val members = arrayListOf<Pair<String, JsonValue>>("v" to Json.int(1),
            "wrappedDeks" to JsonValue.Arr(entries.map { Json.obj("kek_id" to Json.str(it.kekId), "dek_cipher" to Json.str(Base64Url.encode(it.dekCipher))) }),
            "updatedUtc" to Json.str(UtcTime.formatted(clock())))
        hint?.let { members.add("hint" to Json.str(it)) }
        val header = JsonValue.Obj(members)
        val (iv, sealed) = Crypto.gcmSeal(dek, plaintext, null)
        return VaultEnvelope(entries, iv, sealed.copyOfRange(sealed.size - 16, sealed.size), sealed.copyOfRange(0, sealed.size - 16),
            (header["updatedUtc"] as JsonValue.Str).value, hint, null, null, null, header).encoded()
    }
}
