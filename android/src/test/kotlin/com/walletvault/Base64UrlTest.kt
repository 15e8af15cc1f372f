package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test

class Base64UrlTest {
    @Test
    fun rfc4648Vectors() {
        val cases = listOf("" to "", "f" to "Zg", "fo" to "Zm8", "foo" to "Zm9v", "foob" to "Zm9vYg", "fooba" to "Zm9vYmE", "foobar" to "Zm9vYmFy")
        for ((plain, encoded) in cases) {
            assertEquals(encoded, Base64Url.encode(Crypto.utf8(plain)))
            assertEquals(plain, String(Base64Url.decode(encoded)!!, Charsets.UTF_8))
        }
        assertEquals("-_8", Base64Url.encode(byteArrayOf(0xFB.toByte(), 0xFF.toByte())))
    }

    @Test
    fun onlyCanonicalSpellingsAreAccepted() {
        for (bad in listOf("Zg==", "Zg=", "+/8", "Zm9v\n", "Zm 9v", "Z", "Zm9vY", "Zh", "Zm9", "Zm8=", "Zm9vYmF", "é", "Zm\u0000v", "Zm9vYh"))
            assertNull(Base64Url.decode(bad), bad)
        // Trailing bits: "Zh" has low bits set (Zg is the canonical spelling of "f"); "Zm9" has them set ("Zm8" is "fo").
        assertEquals("f", String(Base64Url.decode("Zg")!!, Charsets.UTF_8))
    }

    @Test
    fun everyLengthRoundTrips() {
        for (n in 0..70) {
            val bytes = Crypto.randomBytes(n)
            TestSupport.assertBytes(bytes, Base64Url.decode(Base64Url.encode(bytes))!!)
        }
    }
}
