package com.walletvault

import java.io.ByteArrayOutputStream

/**
 * Argon2id costs as an entry stores them, and the limits a reader holds them to (FORMAT.md §7.3): each cost between
 * [FLOOR] and [CEILING] (`weakParameters`), and per open at most [MAX_ENTRIES_PER_OPEN] passphrase entries whose
 * [work] sums to at most [MAX_WORK_PER_OPEN] (`workLimitExceeded`), all checked before the first derivation.
 */
data class Argon2Costs(val memoryKiB: Int, val iterations: Int, val parallelism: Int) {
    /** Between the floor (19 MiB, t 2, p 1) and the ceiling (256 MiB, t 8, p 4). (RFC 9106's m ≥ 8·p cannot fail within them.) */
    val isWithinReaderLimits: Boolean
        get() = memoryKiB in FLOOR.memoryKiB..CEILING.memoryKiB && iterations in FLOOR.iterations..CEILING.iterations &&
            parallelism in FLOOR.parallelism..CEILING.parallelism

    /** m × t in KiB·passes, what [MAX_WORK_PER_OPEN] bounds (lanes split the same memory). */
    val work: Long get() = memoryKiB.toLong() * iterations

    override fun toString() = "m=$memoryKiB,t=$iterations,p=$parallelism"

    companion object {
        val DEFAULT = Argon2Costs(65536, 3, 1)
        val FLOOR = Argon2Costs(19456, 2, 1)
        val CEILING = Argon2Costs(262144, 8, 4)
        const val MAX_ENTRIES_PER_OPEN = 4
        /** Four entries at the default costs: 4 × 65536 × 3. */
        const val MAX_WORK_PER_OPEN = 4L * 65536 * 3

        /**
         * The costs of every passphrase entry one open would derive for, checked before any derivation: one out of
         * range refuses the blob (`weakParameters`, not skipped), more than four or more total work than the budget
         * is `workLimitExceeded`.
         */
        fun checkOpenBudget(entries: List<Argon2Costs>) {
            entries.firstOrNull { !it.isWithinReaderLimits }?.let {
                throw VaultException.WeakParameters("Argon2id costs $it are outside $FLOOR to $CEILING")
            }
            if (entries.size > MAX_ENTRIES_PER_OPEN)
                throw VaultException.WorkLimitExceeded("the blob has ${entries.size} passphrase entries; a reader derives for at most $MAX_ENTRIES_PER_OPEN")
            val total = entries.fold(0L) { sum, costs -> sum + costs.work }
            if (total > MAX_WORK_PER_OPEN)
                throw VaultException.WorkLimitExceeded("the passphrase entries need $total KiB·passes of Argon2id; a reader spends at most $MAX_WORK_PER_OPEN")
        }
    }
}

/** A public key as an entry's `jwk` or `epk` holds it (FORMAT.md §4.1). */
sealed class PublicJwk {
    data class P256(val x: ByteArray, val y: ByteArray) : PublicJwk() {
        override fun equals(other: Any?) = other is P256 && x.contentEquals(other.x) && y.contentEquals(other.y)
        override fun hashCode() = x.contentHashCode() * 31 + y.contentHashCode()
    }
    data class Rsa(val n: ByteArray, val e: ByteArray) : PublicJwk() {
        override fun equals(other: Any?) = other is Rsa && n.contentEquals(other.n) && e.contentEquals(other.e)
        override fun hashCode() = n.contentHashCode() * 31 + e.contentHashCode()
    }

    /** Members in RFC 7638 order, which is also the order written. */
    val json: JsonValue.Obj
        get() = when (this) {
            is P256 -> Json.obj("crv" to Json.str("P-256"), "kty" to Json.str("EC"),
                "x" to Json.str(Base64Url.encode(x)), "y" to Json.str(Base64Url.encode(y)))
            is Rsa -> Json.obj("e" to Json.str(Base64Url.encode(e)), "kty" to Json.str("RSA"), "n" to Json.str(Base64Url.encode(n)))
        }

    /** RFC 7638 SHA-256 thumbprint, base64url: the `kek_id` of public-key entries (§6). */
    val thumbprint: String get() = Base64Url.encode(Crypto.sha256(Json.write(json)))

    companion object {
        /** NIST SP 800-131A's floor for RSA (§4.1): below it `weakParameters`. */
        const val RSA_MIN_BITS = 2048
        /** Above it `malformed` (§4.1). */
        const val RSA_MAX_BITS = 16384

        fun parse(value: JsonValue, path: String): PublicJwk {
            val reader = MemberReader(value as? JsonValue.Obj ?: throw VaultException.Malformed("$path must be an object"), path)
            return when (reader.string("kty")) {
                "EC" -> {
                    reader.refuseMembers(setOf("kty", "crv", "x", "y"))
                    if (reader.string("crv") != "P-256") throw VaultException.Malformed("$path.crv must be P-256")
                    val x = reader.bytes("x")
                    val y = reader.bytes("y")
                    if (x.size != 32 || y.size != 32) throw VaultException.Malformed("$path coordinates must be 32 bytes each")
                    // Each coordinate below p and the point on P-256, when the blob is parsed (§4.1).
                    Crypto.p256PublicKey(x, y, path)
                    P256(x, y)
                }
                "RSA" -> {
                    reader.refuseMembers(setOf("kty", "n", "e"))
                    val n = reader.bytes("n")
                    val e = reader.bytes("e")
                    if (n[0] == 0.toByte() || e[0] == 0.toByte()) throw VaultException.Malformed("$path.n and .e must not have leading zeros")
                    val bits = java.math.BigInteger(1, n).bitLength()
                    if (bits > RSA_MAX_BITS) throw VaultException.Malformed("$path.n has $bits bits, more than $RSA_MAX_BITS")
                    if (bits < RSA_MIN_BITS) throw VaultException.WeakParameters("$path.n has $bits bits; at least $RSA_MIN_BITS are required")
                    Rsa(n, e)
                }
                else -> throw VaultException.Malformed("$path.kty must be EC or RSA")
            }
        }
    }
}

/** How an entry's DEK was wrapped (its `alg` and parameters); [Seed] for seed-form entries, which have none. */
sealed class Scheme(val alg: String?) {
    object Seed : Scheme(null)
    object A256kwStored : Scheme("A256KW")
    object A256kwRecoveryCode : Scheme("A256KW")
    class A256kwPassphrase(val salt: ByteArray, val costs: Argon2Costs) : Scheme("A256KW")
    class A256gcmkw(val iv: ByteArray, val tag: ByteArray) : Scheme("A256GCMKW")
    class RsaOaep256(val recipient: PublicJwk.Rsa) : Scheme("RSA-OAEP-256")
    class EcdhEsA256kw(val ephemeral: PublicJwk.P256, val recipient: PublicJwk.P256) : Scheme("ECDH-ES+A256KW")
    object SelfEcdh : Scheme("WV-ECDH-SELF+A256GCMKW")

    /**
     * FORMAT.md §11.2: whether opening through such an entry proves the blob's writer held the entry's key, so the
     * writer is a member: every symmetric entry. Public-key entries do not. A seed-form entry names no algorithm: the
     * reader asks [algorithmAuthenticatesWriter] with the `alg` of the key that unwrapped it, as Swift does.
     */
    val authenticatesWriter: Boolean
        get() = this is A256kwStored || this is A256kwRecoveryCode || this is A256kwPassphrase || this is A256gcmkw || this is SelfEcdh

    companion object {
        /**
         * Swift `KeyWrapAlgorithm.authenticatesWriter`: `A256KW`, `A256GCMKW` (the Keystore) and
         * `WV-ECDH-SELF+A256GCMKW` yes; `ECDH-ES+A256KW` and `RSA-OAEP-256` (anyone can wrap to a public key) no.
         */
        fun algorithmAuthenticatesWriter(alg: String): Boolean = alg == "A256KW" || alg == "A256GCMKW" || alg == "WV-ECDH-SELF+A256GCMKW"

        /** Every `alg` FORMAT.md §4.1 names. */
        val ALGORITHMS = setOf("A256KW", "A256GCMKW", "RSA-OAEP-256", "ECDH-ES+A256KW", "WV-ECDH-SELF+A256GCMKW")
    }
}

/** One entry of `wrappedDeks`. [label] and [created] are null only in the seed form. */
class WrappedKey(
    val kekId: String,
    val dekCipher: ByteArray,
    val scheme: Scheme,
    val label: String? = null,
    val created: String? = null
) {
    fun labeled(label: String, created: String) = WrappedKey(kekId, dekCipher, scheme, label, created)

    /**
     * The raw P-256 public key (X ‖ Y, base64url) this entry is wrapped to, where its members name one: the recipient
     * of an ECDH-ES entry, or the key a self-ECDH entry's `kek_id` spells (as the seed's iOS entries do); null
     * otherwise (Swift `p256RecipientKey`). Two entries with the same key open for the same holder.
     */
    internal val p256RecipientKey: String?
        get() = when (val s = scheme) {
            is Scheme.EcdhEsA256kw -> Base64Url.encode(s.recipient.x + s.recipient.y)
            is Scheme.SelfEcdh, is Scheme.Seed -> Base64Url.decode(kekId)?.takeIf { it.size == 64 }?.let { Base64Url.encode(it) }
            else -> null
        }

    /** `kek_id` and `dek_cipher` first (the seed's members), then `alg`, parameters, `label`, `created`. */
    val json: JsonValue.Obj
        get() {
            val members = arrayListOf<Pair<String, JsonValue>>("kek_id" to Json.str(kekId), "dek_cipher" to Json.str(Base64Url.encode(dekCipher)))
            scheme.alg?.let { members.add("alg" to Json.str(it)) }
            when (val s = scheme) {
                is Scheme.A256kwRecoveryCode -> members.add("kdf" to Json.str("HKDF-SHA256"))
                is Scheme.A256kwPassphrase -> {
                    members.add("kdf" to Json.str("Argon2id"))
                    members.add("salt" to Json.str(Base64Url.encode(s.salt)))
                    members.add("m" to Json.int(s.costs.memoryKiB.toLong()))
                    members.add("t" to Json.int(s.costs.iterations.toLong()))
                    members.add("p" to Json.int(s.costs.parallelism.toLong()))
                }
                is Scheme.A256gcmkw -> {
                    members.add("iv" to Json.str(Base64Url.encode(s.iv)))
                    members.add("tag" to Json.str(Base64Url.encode(s.tag)))
                }
                is Scheme.RsaOaep256 -> members.add("jwk" to s.recipient.json)
                is Scheme.EcdhEsA256kw -> {
                    members.add("epk" to s.ephemeral.json)
                    members.add("jwk" to s.recipient.json)
                }
                else -> Unit
            }
            label?.let { members.add("label" to Json.str(it)) }
            created?.let { members.add("created" to Json.str(it)) }
            return JsonValue.Obj(members)
        }

    companion object {
        const val MAX_LABEL_CHARACTERS = 256

        /** Strict reading of an extended-form entry (§4.1). */
        fun parseExtended(entry: JsonValue.Obj, path: String): WrappedKey {
            val reader = MemberReader(entry, path)
            val alg = reader.string("alg")
            if (alg !in Scheme.ALGORITHMS) throw VaultException.UnsupportedAlgorithm("$path.alg names an algorithm this reader does not implement")
            val dekCipher = reader.bytes("dek_cipher")
            val allowed = hashSetOf("kek_id", "dek_cipher", "alg", "label", "created")
            val scheme: Scheme
            // A symmetric entry may wrap a bound payload (WrapBinding), 24 bytes longer than a DEK.
            val expected: List<Int>
            when (alg) {
                "A256KW" -> {
                    expected = listOf(40, 64)
                    scheme = when (reader.optionalString("kdf")) {
                        null -> Scheme.A256kwStored
                        "HKDF-SHA256" -> { allowed.add("kdf"); Scheme.A256kwRecoveryCode }
                        "Argon2id" -> {
                            allowed.addAll(listOf("kdf", "salt", "m", "t", "p"))
                            val salt = reader.bytes("salt")
                            if (salt.size < 16) throw VaultException.Malformed("$path.salt must be at least 16 bytes")
                            Scheme.A256kwPassphrase(salt, Argon2Costs(reader.int("m"), reader.int("t"), reader.int("p")))
                        }
                        else -> throw VaultException.UnsupportedAlgorithm("$path.kdf names a derivation this reader does not implement")
                    }
                }
                "A256GCMKW" -> {
                    expected = listOf(32, 56)
                    allowed.addAll(listOf("iv", "tag"))
                    val iv = reader.bytes("iv")
                    val tag = reader.bytes("tag")
                    if (iv.size != 12 || tag.size != 16) throw VaultException.Malformed("$path.iv must be 12 bytes and $path.tag 16 bytes")
                    scheme = Scheme.A256gcmkw(iv, tag)
                }
                "RSA-OAEP-256" -> {
                    allowed.add("jwk")
                    val recipient = PublicJwk.parse(reader.member("jwk"), "$path.jwk") as? PublicJwk.Rsa
                        ?: throw VaultException.Malformed("$path.jwk must be an RSA key")
                    expected = listOf(recipient.n.size)
                    scheme = Scheme.RsaOaep256(recipient)
                }
                "ECDH-ES+A256KW" -> {
                    expected = listOf(40)
                    allowed.addAll(listOf("epk", "jwk"))
                    val epk = PublicJwk.parse(reader.member("epk"), "$path.epk") as? PublicJwk.P256
                    val jwk = PublicJwk.parse(reader.member("jwk"), "$path.jwk") as? PublicJwk.P256
                    if (epk == null || jwk == null) throw VaultException.Malformed("$path.epk and $path.jwk must be P-256 keys")
                    scheme = Scheme.EcdhEsA256kw(epk, jwk)
                }
                else -> {
                    expected = listOf(60, 84)
                    scheme = Scheme.SelfEcdh
                }
            }
            if (dekCipher.size !in expected) throw VaultException.Malformed("$path.dek_cipher must be ${expected.joinToString(" or ")} bytes for $alg")
            reader.refuseMembers(allowed)
            val label = reader.string("label")
            if (label.codePointCount(0, label.length) > MAX_LABEL_CHARACTERS) throw VaultException.Malformed("$path.label must have at most $MAX_LABEL_CHARACTERS characters")
            val created = reader.string("created")
            if (UtcTime.parse(created) == null) throw VaultException.Malformed("$path.created must be an RFC 3339 timestamp in UTC")
            val kekId = reader.string("kek_id")
            // §4.1: a public-key entry's kek_id is exactly its jwk's RFC 7638 thumbprint, so that an edited jwk cannot
            // hand later DEKs (re-wrapped by rotating writers) to another key.
            val recipient = when (scheme) { is Scheme.RsaOaep256 -> scheme.recipient; is Scheme.EcdhEsA256kw -> scheme.recipient; else -> null }
            if (recipient != null && recipient.thumbprint != kekId) throw VaultException.Malformed("$path.kek_id is not the RFC 7638 thumbprint of its jwk")
            return WrappedKey(kekId, dekCipher, scheme, label, created)
        }
    }
}

/** Typed access to one parsed object's members; errors are `malformed` and name the member's path. */
class MemberReader(private val obj: JsonValue.Obj, private val path: String) {
    private fun name(member: String) = if (path.isEmpty()) member else "$path.$member"
    fun member(member: String): JsonValue = obj[member] ?: throw VaultException.Malformed("${name(member)} is missing")
    fun string(member: String): String = member(member).string ?: throw VaultException.Malformed("${name(member)} must be a string")
    fun optionalString(member: String): String? = if (obj[member] == null) null else string(member)
    fun bytes(member: String): ByteArray {
        val decoded = Base64Url.decode(string(member))
        if (decoded == null || decoded.isEmpty()) throw VaultException.Malformed("${name(member)} must be non-empty unpadded base64url")
        return decoded
    }
    /** An integer from 1 to 2^53 − 1. */
    fun positive(member: String): Long {
        val value = member(member).long
        if (value == null || value <= 0 || value >= (1L shl 53)) throw VaultException.Malformed("${name(member)} must be an integer from 1 to 2^53 - 1")
        return value
    }
    fun int(member: String): Int {
        val value = positive(member)
        if (value > Int.MAX_VALUE) throw VaultException.Malformed("${name(member)} is too large")
        return value.toInt()
    }
    fun refuseMembers(allowed: Set<String>) {
        val unexpected = obj.names.firstOrNull { it !in allowed }
        if (unexpected != null) throw VaultException.Malformed("${name(unexpected)} is not a member this form allows")
    }
}

/** A parsed blob of either form (FORMAT.md §2–§4). Nothing is decrypted here; [VaultOpener] does that. */
class VaultEnvelope internal constructor(
    val entries: List<WrappedKey>,
    val iv: ByteArray,
    val tag: ByteArray,
    val ciphertext: ByteArray,
    val updatedUtc: String,
    val hint: String?,
    /** Null in the seed form. */
    val counter: Long?,
    val dekSeals: Long?,
    internal val macs: ByteArray?,
    /** Every top-level member but `cipher`, `iv` and `tag`: what the AAD encodes. */
    val header: JsonValue.Obj,
    vaultIdentifier: ByteArray? = null,
    /** §11.1 `epoch`; null unless the blob is anchored. */
    val epoch: Long? = null,
    internal val sealedVaultSecret: ByteArray? = null,
    previous: ByteArray? = null
) {
    private val previousBytes = previous
    /** §11.10 `previous`: the digest ([VersionDigests]) of the version this one was sealed over; null for a vault's first version and earlier writers. */
    val previous: ByteArray? get() = previousBytes?.copyOf()
    private val vaultIdBytes = vaultIdentifier
    val isExtended: Boolean get() = counter != null
    /** Whether the blob carries `vault_id`, `epoch` and `vault_secret` (FORMAT.md §11.1). */
    val isAnchored: Boolean get() = vaultIdBytes != null
    /** §11.1 `vault_id` (16 bytes), or null for seed-form and pre-anchor blobs. */
    val vaultIdentifier: ByteArray? get() = vaultIdBytes?.copyOf()
    val updatedAtMillis: Long get() = UtcTime.parse(updatedUtc) ?: 0

    /** The blob text: header members in order, `iv` and `tag` after `wrappedDeks`, `cipher` last (§3.2). */
    fun encoded(): ByteArray {
        val out = ByteArrayOutputStream(ciphertext.size * 4 / 3 + 1024)
        Json.generator(out).use { g ->
            g.writeStartObject()
            for ((name, value) in header.members) {
                g.writeFieldName(name)
                Json.write(g, value)
                if (name == "wrappedDeks") {
                    g.writeStringField("iv", Base64Url.encode(iv))
                    g.writeStringField("tag", Base64Url.encode(tag))
                }
            }
            g.writeStringField("cipher", Base64Url.encode(ciphertext))
            g.writeEndObject()
        }
        return out.toByteArray()
    }

    companion object {
        const val MAX_ENTRIES = 64
        const val MAX_HINT_CHARACTERS = 256
        private val EXTENDED_MEMBERS = setOf("v", "wrappedDeks", "cipher", "iv", "tag", "updatedUtc", "hint", "counter", "dek_seals", "macs",
            "vault_id", "epoch", "vault_secret", "previous")
        /** §11.1: together or not at all, and only in the extended form. */
        val ANCHOR_MEMBERS = listOf("vault_id", "epoch", "vault_secret")

        /**
         * Parses a blob: strict JSON (`invalidJSON`), the seed's shape (`invalidShape`), then the extended form's
         * rules when `counter` is present (`malformed`, `unsupportedAlgorithm`).
         */
        fun parse(blob: ByteArray): VaultEnvelope = parse(blob, cutCipher = true)

        /** [cutCipher] false always parses the whole text (to check §8.1 reads the same). */
        fun parse(blob: ByteArray, cutCipher: Boolean): VaultEnvelope {
            // §8.1: a last `cipher` is taken without scanning it when that provably reads the same; else the whole text.
            val cut = if (cutCipher) cutTrailingCipher(blob) else null
            val json = cut?.first ?: try {
                Json.parse(blob)
            } catch (e: JsonParseError) {
                throw VaultException.InvalidJson(e.message ?: "not JSON")
            }
            val cutCipher = cut?.second
            val top = json as? JsonValue.Obj ?: throw VaultException.InvalidShape("top level must be an object, not ${json.typeName}")
            // §3.1: a member name containing U+0000, at any depth, is invalidShape.
            if (hasNulName(top)) throw VaultException.InvalidShape("a member name contains U+0000")
            // §3.1: the seed's shape.
            val v = top["v"] ?: throw VaultException.InvalidShape("v is missing")
            if (v != JsonValue.Integer(1)) throw VaultException.InvalidShape("v must be the integer 1")
            val wrapped = top["wrappedDeks"] ?: throw VaultException.InvalidShape("wrappedDeks is missing")
            val entryValues = (wrapped as? JsonValue.Arr)?.elements ?: throw VaultException.InvalidShape("wrappedDeks must be an array")
            if (entryValues.isEmpty()) throw VaultException.InvalidShape("wrappedDeks must not be empty")
            if (entryValues.size > MAX_ENTRIES) throw VaultException.InvalidShape("wrappedDeks has ${entryValues.size} entries, at most $MAX_ENTRIES allowed")
            val seedEntries = entryValues.mapIndexed { index, value ->
                val path = "wrappedDeks[$index]"
                val entry = value as? JsonValue.Obj ?: throw VaultException.InvalidShape("$path must be an object")
                val kekId = entry["kek_id"]?.string
                if (kekId == null || kekId.isEmpty()) throw VaultException.InvalidShape("$path.kek_id must be a non-empty string")
                val dekCipher = shapeBytes(entry, "dek_cipher", "$path.dek_cipher")
                WrappedKey(kekId, dekCipher, Scheme.Seed)
            }
            val ciphertext = cutCipher ?: shapeBytes(top, "cipher", "cipher")
            val iv = shapeBytes(top, "iv", "iv")
            if (iv.size != 12) throw VaultException.InvalidShape("iv must decode to exactly 12 bytes, not ${iv.size}")
            val tag = shapeBytes(top, "tag", "tag")
            if (tag.size != 16) throw VaultException.InvalidShape("tag must decode to exactly 16 bytes, not ${tag.size}")
            val updated = top["updatedUtc"] ?: throw VaultException.InvalidShape("updatedUtc is missing")
            val updatedUtc = updated.string
            if (updatedUtc == null || UtcTime.parse(updatedUtc) == null) throw VaultException.InvalidShape("updatedUtc must be an RFC 3339 timestamp in UTC")
            var hint: String? = null
            top["hint"]?.let { value ->
                val text = value.string ?: throw VaultException.InvalidShape("hint must be a string")
                if (text.codePointCount(0, text.length) > MAX_HINT_CHARACTERS) throw VaultException.InvalidShape("hint must have at most $MAX_HINT_CHARACTERS characters")
                // The server stores the hint as text, which cannot hold U+0000 (FORMAT.md's field table).
                if (text.indexOf('\u0000') >= 0) throw VaultException.InvalidShape("hint must not contain U+0000")
                hint = text
            }
            val header = JsonValue.Obj(top.members.filter { it.first != "cipher" && it.first != "iv" && it.first != "tag" })
            val anchorMembers = ANCHOR_MEMBERS.filter { top[it] != null }
            if (top["counter"] == null) {
                val extendedOnly = anchorMembers + listOfNotNull(if (top["previous"] != null) "previous" else null)
                if (extendedOnly.isNotEmpty()) throw VaultException.Malformed("${extendedOnly.first()} is allowed only in the extended form (with counter)")
                return VaultEnvelope(seedEntries, iv, tag, ciphertext, updatedUtc, hint, null, null, null, header)
            }
            // §3.2 and §4.1, strictly.
            val reader = MemberReader(top, "")
            reader.refuseMembers(EXTENDED_MEMBERS)
            val entries = entryValues.mapIndexed { index, value -> WrappedKey.parseExtended(value as JsonValue.Obj, "wrappedDeks[$index]") }
            if (entries.map { it.kekId }.toSet().size != entries.size) throw VaultException.Malformed("wrappedDeks has two entries with the same kek_id")
            val counter = reader.positive("counter")
            val dekSeals = reader.positive("dek_seals")
            val macs = reader.bytes("macs")
            if (macs.size != HeaderAuthenticator.MACS_BYTES) throw VaultException.Malformed("macs must be ${HeaderAuthenticator.MACS_BYTES} bytes")
            val hasPrevious = top["previous"] != null
            if (anchorMembers.isEmpty()) {
                if (hasPrevious) throw VaultException.Malformed("previous is allowed only in a blob with a vault identity")
                return VaultEnvelope(entries, iv, tag, ciphertext, updatedUtc, hint, counter, dekSeals, macs, header)
            }
            // §11.1: all three or none; exact sizes.
            val missing = ANCHOR_MEMBERS.firstOrNull { top[it] == null }
            if (missing != null) throw VaultException.Malformed("$missing is missing: vault_id, epoch and vault_secret appear together or not at all")
            val vaultIdentifier = reader.bytes("vault_id")
            if (vaultIdentifier.size != VaultSecrets.ID_BYTES) throw VaultException.Malformed("vault_id must be ${VaultSecrets.ID_BYTES} bytes")
            val epoch = reader.positive("epoch")
            val vaultSecret = reader.bytes("vault_secret")
            if (vaultSecret.size != VaultSecrets.sealedLength(epoch))
                throw VaultException.Malformed("vault_secret must be ${VaultSecrets.sealedLength(epoch)} bytes for epoch $epoch, not ${vaultSecret.size}")
            val previous = if (hasPrevious) reader.bytes("previous") else null
            if (previous != null && previous.size != VersionDigests.BYTES) throw VaultException.Malformed("previous must be ${VersionDigests.BYTES} bytes")
            return VaultEnvelope(entries, iv, tag, ciphertext, updatedUtc, hint, counter, dekSeals, macs, header, vaultIdentifier, epoch, vaultSecret, previous)
        }

        private fun hasNulName(value: JsonValue): Boolean = when (value) {
            is JsonValue.Obj -> value.members.any { it.first.indexOf('\u0000') >= 0 || hasNulName(it.second) }
            is JsonValue.Arr -> value.elements.any { hasNulName(it) }
            else -> false
        }

        private val CIPHER_NEEDLE = Crypto.utf8("\"cipher\":\"")

        private fun isWhitespace(b: Byte) = b == 0x20.toByte() || b == 0x09.toByte() || b == 0x0A.toByte() || b == 0x0D.toByte()

        /**
         * FORMAT.md §8.1: the text with the letters of a last `cipher` string cut out, parsed, and those letters
         * decoded; null whenever any step fails (the caller then parses the whole text).
         */
        fun cutTrailingCipher(blob: ByteArray): Pair<JsonValue.Obj, ByteArray>? {
            var end = blob.size
            while (end > 0 && isWhitespace(blob[end - 1])) end--
            val brace = end - 1
            if (brace <= 0 || blob[brace] != 0x7D.toByte()) return null
            var quoteEnd = brace
            while (quoteEnd > 0 && isWhitespace(blob[quoteEnd - 1])) quoteEnd--
            val closing = quoteEnd - 1
            if (closing <= 0 || blob[closing] != 0x22.toByte()) return null
            // The first occurrence of "cipher":" before the closing quote; o is its last byte, the opening quote.
            var found = -1
            var i = 0
            outer@ while (i + CIPHER_NEEDLE.size <= closing) {
                for (j in CIPHER_NEEDLE.indices) if (blob[i + j] != CIPHER_NEEDLE[j]) { i++; continue@outer }
                found = i
                break
            }
            if (found < 0) return null
            val opening = found + CIPHER_NEEDLE.size - 1
            val decoded = Base64Url.decode(blob, opening + 1, closing) ?: return null
            val rest = ByteArray(opening + 1 + (blob.size - closing))
            System.arraycopy(blob, 0, rest, 0, opening + 1)
            System.arraycopy(blob, closing, rest, opening + 1, blob.size - closing)
            val parsed = try { Json.parse(rest) } catch (e: JsonParseError) { return null }
            val obj = parsed as? JsonValue.Obj ?: return null
            val last = obj.members.lastOrNull() ?: return null
            if (last.first != "cipher" || last.second != JsonValue.Str("")) return null
            return Pair(obj, decoded)
        }

        private fun shapeBytes(obj: JsonValue.Obj, name: String, path: String): ByteArray {
            val value = obj[name] ?: throw VaultException.InvalidShape("$path is missing")
            val text = value.string ?: throw VaultException.InvalidShape("$path must be a string")
            return Base64Url.decode(text) ?: throw VaultException.InvalidShape("$path must be unpadded base64url (RFC 4648 §5)")
        }
    }
}
