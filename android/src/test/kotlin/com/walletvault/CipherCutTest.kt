package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test

/** FORMAT.md §8.1: taking a last `cipher` without scanning it reads exactly what the whole parse reads. */
class CipherCutTest {
    private val kek = StoredKeyKek.generate()
    private val blob = runSuspending { VaultSealer(InMemoryCounterStore(), hint = "h").create(TestSupport.plaintext, "v", listOf(Recipient(kek, "k"))).blob }

    private fun outcome(bytes: ByteArray, cut: Boolean): String = try {
        val e = VaultEnvelope.parse(bytes, cut)
        TestSupport.hex(CanonicalEncoding.encode(e.header)) + "/" + TestSupport.hex(e.ciphertext) + "/" + TestSupport.hex(e.iv)
    } catch (e: VaultException) {
        e.javaClass.simpleName
    }

    @Test
    fun writersPutCipherLastAndTheCutTakesIt() {
        assertNotNull(VaultEnvelope.cutTrailingCipher(blob))
        assertEquals(outcome(blob, false), outcome(blob, true))
    }

    @Test
    fun trickyTextsFallBackToTheWholeParse() {
        val text = String(blob, Charsets.UTF_8)
        val head = text.substring(0, text.indexOf("\"cipher\":\""))
        val letters = text.substring(text.indexOf("\"cipher\":\"") + 10, text.lastIndexOf('"'))
        val cases = listOf(
            head + "\"cipher\":\"$letters\",\"cipher\":\"$letters\"}",          // a repeated cipher
            head + "\"cipher\":\"${letters.dropLast(2)}\\u0041A\"}",            // an escape among the letters
            head + "\"cipher\":\"$letters=\"}",                                  // padding
            head + "\"x\":\"\\\"cipher\\\":\\\"\",\"cipher\":\"$letters\"}",     // the needle inside an earlier string
            head + "\"cipher\":\"$letters\" , \"z\":\"\"}",                       // cipher not last
            head + "\"cipher\":\"$letters\"}}",                                  // trailing garbage
            text.replace("\"hint\":\"h\"", "\"hint\":\"\\\"cipher\\\":\\\"\""),
            "{\"cipher\":\"\"}", "{\"cipher\":\"AAAA\"}", "\"cipher\":\"AA\"}", "{\"cipher\":\"A\"}")
        for (case in cases) {
            val bytes = Crypto.utf8(case)
            assertEquals(outcome(bytes, false), outcome(bytes, true), case.take(120))
        }
        assertNull(VaultEnvelope.cutTrailingCipher(Crypto.utf8(cases[0])))
    }

    @Test
    fun randomMutationsReadTheSameBothWays() {
        val random = java.util.Random(81)
        val alphabet = Crypto.utf8("\"\\{}:, A=-_x")
        repeat(3000) {
            val bytes = blob.copyOf()
            repeat(1 + random.nextInt(3)) {
                val at = if (random.nextBoolean()) bytes.size - 1 - random.nextInt(minOf(200, bytes.size)) else random.nextInt(bytes.size)
                bytes[at] = alphabet[random.nextInt(alphabet.size)]
            }
            assertEquals(outcome(bytes, false), outcome(bytes, true))
        }
    }
}
