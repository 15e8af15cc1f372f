package com.walletvault

import java.util.Locale
import java.util.concurrent.ConcurrentHashMap

/**
 * What a reader pins per vault (FORMAT.md §11.2): the vault's `vault_id` ([id], 16 bytes), the newest epoch it
 * accepted and that epoch's anchor `F(e)` ([fingerprint], 32 bytes). Not secret: keep it where counters are kept.
 */
class VaultAnchor(id: ByteArray, val epoch: Long, fingerprint: ByteArray) {
    private val idBytes = id.copyOf()
    private val fingerprintBytes = fingerprint.copyOf()
    init {
        require(idBytes.size == VaultSecrets.ID_BYTES) { "a vault_id is 16 bytes" }
        require(fingerprintBytes.size == 32) { "an anchor is 32 bytes" }
        require(epoch in 1 until (1L shl 53)) { "an epoch is from 1 to 2^53 - 1" }
    }
    val id: ByteArray get() = idBytes.copyOf()
    val fingerprint: ByteArray get() = fingerprintBytes.copyOf()
    /** `vault_id` as the blob spells it (base64url, 22 characters). */
    val idText: String get() = Base64Url.encode(idBytes)

    /** The first 8 bytes of `F(e)` as 16 hex digits in groups of 4: what two members compare (§11.6). */
    val shortFingerprint: String get() = grouped(fingerprintBytes)

    fun sameVault(other: ByteArray): Boolean = Crypto.constantTimeEquals(idBytes, other)

    override fun equals(other: Any?) = other is VaultAnchor && epoch == other.epoch &&
        idBytes.contentEquals(other.idBytes) && fingerprintBytes.contentEquals(other.fingerprintBytes)
    override fun hashCode() = idBytes.contentHashCode() * 31 + epoch.hashCode()
    override fun toString() = "VaultAnchor($idText, epoch $epoch, $shortFingerprint)"

    internal val json: JsonValue.Obj
        get() = Json.obj("vault_id" to Json.str(idText), "epoch" to Json.int(epoch), "anchor" to Json.str(Base64Url.encode(fingerprintBytes)))

    companion object {
        /** The first 8 bytes of [digest] as 16 lower-case hex digits in four groups of four, as people compare them. */
        fun grouped(digest: ByteArray): String =
            (0 until 8).joinToString("") { String.format(Locale.ROOT, "%02x", digest[it]) }.chunked(4).joinToString(" ")

        internal fun parse(value: JsonValue): VaultAnchor? {
            val obj = value as? JsonValue.Obj ?: return null
            val id = obj["vault_id"]?.string?.let { Base64Url.decode(it) } ?: return null
            val epoch = obj["epoch"]?.long ?: return null
            val fingerprint = obj["anchor"]?.string?.let { Base64Url.decode(it) } ?: return null
            return try { VaultAnchor(id, epoch, fingerprint) } catch (e: IllegalArgumentException) { null }
        }
    }
}

/** Remembers the anchor a reader pinned per vault (FORMAT.md §11.2), beside the [CounterStore]. */
interface AnchorStore {
    /** The pinned anchor of the vault this device knows as [vaultId] (the local name, as for counters), or null. */
    fun anchor(vaultId: String): VaultAnchor?
    /**
     * Pins [anchor]: replaces a pinned anchor of the same `vault_id` only by a higher or equal epoch (never moves
     * back), and one of another `vault_id` (only a device that creates a vault, or migrates one, pins a new id).
     */
    fun pin(vaultId: String, anchor: VaultAnchor)
}

/** Counters and anchors in memory (tests, tools); [LocalVaultStore] persists both. */
class InMemoryCounterStore : CounterStore, AnchorStore {
    private val counters = ConcurrentHashMap<String, Long>()
    private val anchors = HashMap<String, VaultAnchor>()
    override fun highest(vaultId: String): Long = counters[vaultId] ?: 0
    override fun advance(vaultId: String, counter: Long) { counters.merge(vaultId, counter) { a, b -> maxOf(a, b) } }
    override fun anchor(vaultId: String): VaultAnchor? = synchronized(anchors) { anchors[vaultId] }
    override fun pin(vaultId: String, anchor: VaultAnchor) {
        synchronized(anchors) { if (AnchorRules.replaces(anchors[vaultId], anchor)) anchors[vaultId] = anchor }
    }
    private val seen = HashMap<String, Map<Long, ByteArray>>()
    override fun acceptedDigest(vaultId: String, counter: Long): ByteArray? = synchronized(seen) { seen[vaultId]?.get(counter)?.copyOf() }
    override fun hasSeen(vaultId: String, digest: ByteArray): Boolean = synchronized(seen) { VersionDigests.contains(seen[vaultId], digest) }
    override fun remember(vaultId: String, counter: Long, digest: ByteArray) {
        synchronized(seen) { seen[vaultId] = VersionDigests.adding(seen[vaultId] ?: emptyMap(), counter, digest) }
    }
    /** The digests kept for [vaultId], by counter. */
    internal fun seenDigests(vaultId: String): Map<Long, ByteArray> = synchronized(seen) { seen[vaultId] ?: emptyMap() }
}

internal object AnchorRules {
    fun replaces(current: VaultAnchor?, new: VaultAnchor): Boolean =
        current == null || !current.sameVault(new.id) || new.epoch >= current.epoch
}

/**
 * The vault secrets of FORMAT.md §11: `vault_id`, the current `epoch` and the secrets `S_{e−n+1} … S_e` the blob
 * carries (n = min(e, 16)), with the derivations Kₛ, AADₛ, F(e) and the pairing confirmation code (§11.4).
 * Secret: it lives in a [VaultState], never on disk outside the vault.
 */
class VaultSecrets internal constructor(id: ByteArray, val epoch: Long, secrets: List<ByteArray>) {
    private val idBytes = id.copyOf()
    internal val secrets: List<ByteArray> = secrets.map { it.copyOf() }
    init {
        require(idBytes.size == ID_BYTES && epoch in 1 until (1L shl 53))
        require(this.secrets.size == carried(epoch) && this.secrets.all { it.size == SECRET_BYTES })
    }

    val id: ByteArray get() = idBytes.copyOf()
    val idText: String get() = Base64Url.encode(idBytes)

    /** `S_epoch` if the blob carries it. */
    internal fun secret(epoch: Long): ByteArray? {
        val index = secrets.size - 1 - (this.epoch - epoch)
        return if (epoch <= this.epoch && index >= 0) secrets[index.toInt()] else null
    }

    /** `(vault_id, e, F(e))` of the current epoch: what a reader pins after accepting this blob. */
    val anchor: VaultAnchor get() = VaultAnchor(idBytes, epoch, fingerprint(idBytes, epoch, secrets.last()))

    /** §11.5: `S_{e+1}` drawn, epoch + 1, the last 16 secrets carried. */
    internal fun rotated(): VaultSecrets = VaultSecrets(idBytes, epoch + 1, (secrets + Crypto.randomBytes(SECRET_BYTES)).takeLast(MAX_CARRIED))

    /** The `vault_secret` member under [dek]: `iv ‖ GCM(Kₛ, iv, S… , AADₛ) ‖ tag`. */
    internal fun seal(dek: ByteArray): ByteArray {
        val (iv, sealed) = Crypto.gcmSeal(key(dek), Crypto.concat(*secrets.toTypedArray()), aad(idBytes, epoch))
        return iv + sealed
    }

    /**
     * The six-digit code the approver shows after saving the new device's entry (FORMAT.md §11.4), `"123 456"`: over
     * [blob], the exact bytes saved (and loaded by the new device), and [kekId], the `kek_id` of the new device's entry
     * in it. See [confirmationCode] in the companion for the rule.
     */
    fun confirmationCode(kekId: String, blob: ByteArray): String = confirmationCode(secrets.last(), idBytes, epoch, kekId, blob)

    companion object {
        const val ID_BYTES = 16
        const val SECRET_BYTES = 32
        const val MAX_CARRIED = 16
        private val SECRET_DOMAIN = Crypto.utf8("WalletVault-v1 vault secret")
        private val ANCHOR_DOMAIN = Crypto.utf8("WalletVault-v1 anchor") + byteArrayOf(0)
        private val CONFIRMATION_DOMAIN = Crypto.utf8("WalletVault-v1 pairing confirmation v2") + byteArrayOf(0)

        /**
         * FORMAT.md §11.4, v2: `confirmation = HMAC-SHA256(S_e, "WalletVault-v1 pairing confirmation v2" ‖ 0x00 ‖
         * vault_id ‖ u64be(e) ‖ u32be(len kek_id) ‖ UTF-8 kek_id ‖ SHA-256(blob))`; the code is the first 4 bytes as an
         * unsigned big-endian integer mod 1 000 000, six digits `"123 456"`. [secret] is `S_e`, [id] the raw 16-byte
         * `vault_id`, [kekId] the new device's entry's `kek_id` (any key kind), [blob] the blob's exact bytes.
         */
        fun confirmationCode(secret: ByteArray, id: ByteArray, epoch: Long, kekId: String, blob: ByteArray): String {
            val kek = Crypto.utf8(kekId)
            val mac = Crypto.hmac(secret, Crypto.concat(CONFIRMATION_DOMAIN, id, u64be(epoch), Crypto.u32be(kek.size), kek, Crypto.sha256(blob)))
            var number = 0L
            for (i in 0 until 4) number = (number shl 8) or (mac[i].toLong() and 0xFF)
            val digits = String.format(Locale.ROOT, "%06d", number % 1_000_000)
            return digits.substring(0, 3) + " " + digits.substring(3)
        }

        /** How many secrets a blob of [epoch] carries: min(e, 16). */
        fun carried(epoch: Long): Int = if (epoch >= MAX_CARRIED) MAX_CARRIED else epoch.toInt()

        /** The exact `vault_secret` length for [epoch]: 12 + 32·n + 16. */
        fun sealedLength(epoch: Long): Int = 12 + SECRET_BYTES * carried(epoch) + 16

        /** A new vault (or a migrating one): a random `vault_id` and `S_1`, epoch 1. */
        internal fun mint(): VaultSecrets = VaultSecrets(Crypto.randomBytes(ID_BYTES), 1, listOf(Crypto.randomBytes(SECRET_BYTES)))

        internal fun u64be(n: Long): ByteArray = ByteArray(8) { (n ushr (56 - 8 * it)).toByte() }

        /** Kₛ = HKDF(DEK, empty, "WalletVault-v1 vault secret", 32). */
        internal fun key(dek: ByteArray): ByteArray = Crypto.hkdf(dek, ByteArray(0), SECRET_DOMAIN, 32)

        /** AADₛ = "WalletVault-v1 vault secret" ‖ 0x00 ‖ vault_id ‖ u64be(epoch). */
        internal fun aad(id: ByteArray, epoch: Long): ByteArray = Crypto.concat(SECRET_DOMAIN, byteArrayOf(0), id, u64be(epoch))

        /** F(e) = SHA-256("WalletVault-v1 anchor" ‖ 0x00 ‖ vault_id ‖ u64be(e) ‖ S_e). */
        fun fingerprint(id: ByteArray, epoch: Long, secret: ByteArray): ByteArray =
            Crypto.sha256(Crypto.concat(ANCHOR_DOMAIN, id, u64be(epoch), secret))

        /** Opens a blob's `vault_secret` under its DEK; `malformed` if it does not open (§11.1). */
        internal fun open(dek: ByteArray, id: ByteArray, epoch: Long, sealed: ByteArray): VaultSecrets {
            if (sealed.size != sealedLength(epoch)) throw VaultException.Malformed("vault_secret must be ${sealedLength(epoch)} bytes for epoch $epoch")
            val plain = Crypto.gcmOpen(key(dek), sealed.copyOfRange(0, 12), sealed.copyOfRange(12, sealed.size), aad(id, epoch))
                ?: throw VaultException.Malformed("vault_secret does not open under the vault's key")
            val n = carried(epoch)
            return VaultSecrets(id, epoch, (0 until n).map { plain.copyOfRange(it * SECRET_BYTES, (it + 1) * SECRET_BYTES) })
        }

        /** Digits only: spaces, dashes and other separators a user types are ignored. */
        fun normalizeCode(typed: String): String? {
            val digits = typed.filter { it in '0'..'9' }
            if (digits.length != 6 || typed.any { !(it in '0'..'9' || it == ' ' || it == '-' || it == '\u00A0' || it == '\t') }) return null
            return digits
        }
    }
}
