package com.walletvault

import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File
import java.math.BigInteger
import java.security.Signature

/** FORMAT.md §11.8 against write-proof.json (Python-written), which Swift and crosscheck.py read too. */
class WriteKeyTest : WriteProofVectorChecks("write-proof.json")

/** The same checks against kotlin-write-proof.json, which this library wrote (KotlinVectorWriter). */
class KotlinWrittenWriteProofTest : WriteProofVectorChecks("kotlin-write-proof.json")

/** The checks of one write-proof vector file. */
abstract class WriteProofVectorChecks(file: String) {
    private val vector = Json.parse(File(TestSupport.vectorDirectory, file).readBytes()) as JsonValue.Obj
    private fun bytes(name: String) = Base64Url.decode(vector[name]!!.string!!)!!
    private fun secrets(secret: String, epoch: String): VaultSecrets {
        val e = vector[epoch]!!.long!!
        // Only S_e matters to the key; the earlier carried secrets are filler of the right count.
        val carried = (1 until VaultSecrets.carried(e)).map { ByteArray(32) } + listOf(bytes(secret))
        return VaultSecrets(bytes("vault_id"), e, carried)
    }

    /** JCA's verification of a raw `r ‖ s` signature. */
    private fun verifies(publicKey: ByteArray, signature: ByteArray, message: ByteArray): Boolean {
        val key = Crypto.p256PublicKey(publicKey.copyOfRange(0, 32), publicKey.copyOfRange(32, 64), "key")
        val der = org.bouncycastle.asn1.DERSequence(arrayOf(
            org.bouncycastle.asn1.ASN1Integer(BigInteger(1, signature.copyOfRange(0, 32))),
            org.bouncycastle.asn1.ASN1Integer(BigInteger(1, signature.copyOfRange(32, 64))))).encoded
        val verifier = Signature.getInstance("SHA256withECDSA")
        verifier.initVerify(key)
        verifier.update(message)
        return verifier.verify(der)
    }

    @Test
    fun everyMemberDerivesTheSameWriteKeyFromTheEpochsSecret() {
        assertArrayEquals(bytes("write_key"), WriteKey.of(secrets("vault_secret", "epoch")).publicKey)
        assertArrayEquals(bytes("next_write_key"), WriteKey.of(secrets("next_vault_secret", "next_epoch")).publicKey)
    }

    @Test
    fun theProofMessageAndSignaturesAreTheVectors() {
        val message = WriteProof.message(vector["action"]!!.string!!, vector["stored_sync_id"]!!.string!!,
            Crypto.utf8(vector["body"]!!.string!!), bytes("next_write_key"))
        assertArrayEquals(bytes("message"), message)
        assertTrue(verifies(bytes("write_key"), bytes("signature"), message))
        val ours = WriteKey.of(secrets("vault_secret", "epoch")).sign(message)
        assertTrue(verifies(bytes("write_key"), ours, message))
        assertFalse(verifies(bytes("write_key"), ours, message.copyOf(message.size - 1)))
    }

    @Test
    fun aSaveOverAVersionNamesTheNextKeyAndProvesTheBasisKey() {
        val basis = secrets("vault_secret", "epoch")
        val next = secrets("next_vault_secret", "next_epoch")
        val body = Crypto.utf8(vector["body"]!!.string!!)
        val headers = WriteProof.headers(vector["action"]!!.string!!, basis, next, vector["stored_sync_id"]!!.string!!, body)
        assertEquals(vector["next_write_key"]!!.string, headers[WriteProof.WRITE_KEY_HEADER])
        assertTrue(verifies(bytes("write_key"), Base64Url.decode(headers[WriteProof.PROOF_HEADER]!!)!!, bytes("message")))
        // A first save (nothing stored to replace) names its key and proves nothing.
        assertEquals(setOf(WriteProof.WRITE_KEY_HEADER), WriteProof.headers("save", null, next, null, body).keys)
    }
}
