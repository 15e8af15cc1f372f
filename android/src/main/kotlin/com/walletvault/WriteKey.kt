package com.walletvault

import org.bouncycastle.asn1.x9.ECNamedCurveTable
import org.bouncycastle.crypto.digests.SHA256Digest
import org.bouncycastle.crypto.params.ECDomainParameters
import org.bouncycastle.crypto.params.ECPrivateKeyParameters
import org.bouncycastle.crypto.signers.ECDSASigner
import org.bouncycastle.crypto.signers.HMacDSAKCalculator
import java.math.BigInteger

/**
 * A member's write key for one epoch (FORMAT.md §11.8): derived from the epoch's vault secret, it signs the proof the
 * server asks of a save or an erasure that replaces a version naming it. Every member derives the same key.
 */
internal class WriteKey private constructor(private val scalar: BigInteger) {
    /** The public key as the `WalletVault-Write-Key` header carries it: `X ‖ Y`, 64 bytes. */
    val publicKey: ByteArray = curve.g.multiply(scalar).normalize().let {
        Crypto.fixed32(it.affineXCoord.toBigInteger()) + Crypto.fixed32(it.affineYCoord.toBigInteger())
    }

    /** The ES256 signature `r ‖ s` of [message] (RFC 6979 nonces). */
    fun sign(message: ByteArray): ByteArray {
        val signer = ECDSASigner(HMacDSAKCalculator(SHA256Digest()))
        signer.init(true, ECPrivateKeyParameters(scalar, curve))
        val (r, s) = signer.generateSignature(Crypto.sha256(message))
        return Crypto.fixed32(r) + Crypto.fixed32(s)
    }

    companion object {
        private val curve: ECDomainParameters = ECNamedCurveTable.getByName("secp256r1").let { ECDomainParameters(it.curve, it.g, it.n, it.h) }
        private val INFO = Crypto.utf8("WalletVault-v1 write key") + byteArrayOf(0)

        /**
         * The current epoch's key: the scalar is `HKDF-SHA256(ikm = S_e, salt = vault_id, info = "WalletVault-v1 write
         * key" ‖ 0x00 ‖ u64be(e) ‖ u8(i), 32)` for the first i = 0, 1, … in 1 … n − 1 (FIPS 186-5 A.2.2).
         */
        fun of(secrets: VaultSecrets): WriteKey {
            for (attempt in 0..255) {
                val info = Crypto.concat(INFO, VaultSecrets.u64be(secrets.epoch), byteArrayOf(attempt.toByte()))
                val candidate = BigInteger(1, Crypto.hkdf(secrets.secrets.last(), secrets.id, info, 32))
                if (candidate.signum() > 0 && candidate < curve.n) return WriteKey(candidate)
            }
            // 256 candidates all out of range: probability 2^-8192.
            throw IllegalStateException("no P-256 scalar among 256 HKDF outputs")
        }
    }
}

/** The writer-proof headers of a save or an erasure (FORMAT.md §11.8, docs/openapi.yaml). */
internal object WriteProof {
    const val WRITE_KEY_HEADER = "WalletVault-Write-Key"
    const val PROOF_HEADER = "WalletVault-Write-Proof"
    private val DOMAIN = Crypto.utf8("WalletVault-v1 write proof") + byteArrayOf(0)

    /** `"WalletVault-v1 write proof" ‖ 0x00 ‖ action ‖ 0x00 ‖ stored sync_id ‖ 0x00 ‖ SHA-256(body) ‖ next write key`. */
    fun message(action: String, storedSyncId: String, body: ByteArray, nextWriteKey: ByteArray?): ByteArray =
        Crypto.concat(DOMAIN, Crypto.utf8(action), byteArrayOf(0), Crypto.utf8(storedSyncId), byteArrayOf(0), Crypto.sha256(body),
            nextWriteKey ?: ByteArray(0))

    /**
     * The headers for [action] over the stored version [storedSyncId] (as its ETag names it): the write key of the
     * [next] version, and a proof by the key of the [basis] version (the one replaced or erased) when both are known.
     */
    fun headers(action: String, basis: VaultSecrets?, next: VaultSecrets?, storedSyncId: String?, body: ByteArray): Map<String, String> {
        val headers = HashMap<String, String>()
        val nextKey = next?.let { WriteKey.of(it).publicKey }
        if (nextKey != null) headers[WRITE_KEY_HEADER] = Base64Url.encode(nextKey)
        if (basis != null && storedSyncId != null) {
            headers[PROOF_HEADER] = Base64Url.encode(WriteKey.of(basis).sign(message(action, storedSyncId, body, nextKey)))
        }
        return headers
    }
}
