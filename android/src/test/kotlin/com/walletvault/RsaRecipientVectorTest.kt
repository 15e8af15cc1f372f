package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import java.io.File

/**
 * Tests/VaultEnvelopeTests/Vectors/rsa/rsa-recipients.json: RSA keys a writer may or may not wrap to (FORMAT.md
 * §4.1), the same cases Swift's `RSARecipientVectorTests` reads, so both SDKs refuse the same keys, as `malformed`.
 */
class RsaRecipientVectorTest {
    private val cases = ((Json.parse(File("../Tests/VaultEnvelopeTests/Vectors/rsa/rsa-recipients.json").readBytes()) as JsonValue.Obj)
        ["cases"] as JsonValue.Arr).elements.map { it as JsonValue.Obj }

    @Test
    fun theVectorFileReads() {
        assertEquals(13, cases.size)
    }

    @TestFactory
    fun aWriterWrapsOnlyToUsableKeys(): List<DynamicTest> = cases.map { case ->
        DynamicTest.dynamicTest(case["name"]!!.string!!) {
            val key = PublicJwk.Rsa(Base64Url.decode(case["n"]!!.string!!)!!, Base64Url.decode(case["e"]!!.string!!)!!)
            val recipient = PublicKeyRecipient(key)
            val dek = Crypto.randomBytes(32)
            if (case["expect"]!!.string == "usable") {
                assertEquals(key.n.size, runSuspending { recipient.wrap(dek) }.dekCipher.size)
            } else {
                TestSupport.expectThrows<VaultException.Malformed> { runSuspending { recipient.wrap(dek) } }
            }
        }
    }
}
