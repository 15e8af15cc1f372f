package com.walletvault

/**
 * The vault and epoch a symmetric entry of an anchored blob was wrapped for (FORMAT.md §11.9): the entry wraps
 * `DEK ‖ raw vault_id ‖ u64be(epoch)`, so a wrap copied out of an older epoch's blob proves nothing about a newer
 * epoch, even to a reader that holds the key and pinned nothing.
 */
internal class WrapBinding private constructor(private val id: ByteArray, val epoch: Long) {
    fun matches(secrets: VaultSecrets): Boolean = epoch == secrets.epoch && Crypto.constantTimeEquals(id, secrets.id)

    internal companion object {
        /** A 32-byte DEK, a 16-byte `vault_id` and an 8-byte epoch. */
        const val PAYLOAD_BYTES: Int = 56

        /**
         * What [key] wraps for a version carrying [secrets]: the bound payload for a symmetric key of an anchored
         * vault, the bare DEK for a public-key recipient (anyone may write those, so a binding would prove nothing)
         * or a vault without an identity yet.
         */
        fun payload(dek: ByteArray, key: KeyWrapping, secrets: VaultSecrets?): ByteArray =
            if (secrets == null || !Scheme.algorithmAuthenticatesWriter(key.alg)) dek
            else Crypto.concat(dek, secrets.id, VaultSecrets.u64be(secrets.epoch))

        /** The DEK and, for a 56-byte payload, its binding; `unwrapFailed` for a bound payload in a public-key entry. */
        fun split(payload: ByteArray, authenticatesWriter: Boolean): Pair<ByteArray, WrapBinding?> {
            if (payload.size != PAYLOAD_BYTES) return Pair(payload, null)
            if (!authenticatesWriter) throw VaultException.UnwrapFailed("a public-key entry wraps a 32-byte DEK, not a bound payload")
            val epoch = (48 until 56).fold(0L) { n, i -> (n shl 8) or (payload[i].toLong() and 0xff) }
            return Pair(payload.copyOfRange(0, 32), WrapBinding(payload.copyOfRange(32, 48), epoch))
        }

        /**
         * Whether the entry opened through proves its writer for this version (FORMAT.md §11.9): a symmetric entry of
         * an anchored blob only when bound to the blob's `vault_id` and epoch, an unbound one (writers before the
         * binding) only at epoch 1, where no revocation happened. Above epoch 1 an unbound entry still opens the vault,
         * as a public-key entry does, for a reader whose pinned anchor checks the writer. `writerNotMember` for a
         * binding to another vault or epoch, or in a version that names no vault: that entry was made for another blob.
         */
        fun provesWriter(binding: WrapBinding?, authenticatesWriter: Boolean, secrets: VaultSecrets?): Boolean = when {
            binding != null && secrets == null -> throw VaultException.WriterNotMember("a bound entry in a version that names no vault")
            binding != null && !binding.matches(secrets!!) ->
                throw VaultException.WriterNotMember("the entry was wrapped for epoch ${binding.epoch} of a vault, not for this version's")
            binding == null && secrets != null -> authenticatesWriter && secrets.epoch == 1L
            else -> authenticatesWriter
        }
    }
}
