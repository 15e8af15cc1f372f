package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import java.io.File

class JsonTest {
    private val suite = File("src/test/resources/JSONTestSuite/test_parsing")

    private fun files(prefix: String) = suite.listFiles()!!.filter { it.name.startsWith(prefix) }.sortedBy { it.name }

    @TestFactory
    fun jsonTestSuiteMustRejectFilesAreRefused(): List<DynamicTest> {
        val files = files("n_")
        assertEquals(188, files.size)
        return files.map { file ->
            DynamicTest.dynamicTest(file.name) {
                assertThrows(JsonParseError::class.java) { Json.parse(file.readBytes()) }
                // Through the blob reader it is a typed error, never a crash.
                val e = assertThrows(VaultException::class.java) { VaultEnvelope.parse(file.readBytes()) }
                assertTrue(e is VaultException.InvalidJson, "${file.name}: ${e.javaClass.simpleName}")
            }
        }
    }

    @TestFactory
    fun jsonTestSuiteMustAcceptFilesAreAccepted(): List<DynamicTest> {
        // RFC 8259 allows repeated names; FORMAT.md §3.1 refuses them, so these two must be refused here.
        val duplicates = setOf("y_object_duplicated_key.json", "y_object_duplicated_key_and_value.json")
        val files = files("y_")
        assertEquals(95, files.size)
        return files.map { file ->
            DynamicTest.dynamicTest(file.name) {
                if (file.name in duplicates) assertThrows(JsonParseError::class.java) { Json.parse(file.readBytes()) }
                else Json.parse(file.readBytes())
            }
        }
    }

    @Test
    fun duplicateNamesAreRefusedAtAnyDepth() {
        for (text in listOf("{\"a\":1,\"a\":2}", "{\"a\":1,\"a\":1}", "{\"x\":{\"b\":[],\"b\":{}}}", "[{\"k\":1,\"k\":null}]",
            // Canonically equivalent names (é precomposed and decomposed) are one name, as Swift compares them.
            "{\"\u00e9\":1,\"e\u0301\":2}", "{\"\\u00e9\":1,\"e\\u0301\":2}")) {
            assertThrows(JsonParseError::class.java, { Json.parse(text) }, text)
        }
        TestSupport.expectThrows<VaultException.InvalidJson> { VaultEnvelope.parse(Crypto.utf8("{\"v\":1,\"v\":1}")) }
    }

    @Test
    fun depthLimitIsSixtyFour() {
        Json.parse("[".repeat(64) + "]".repeat(64))
        assertThrows(JsonParseError::class.java) { Json.parse("[".repeat(65) + "]".repeat(65)) }
        Json.parse("{\"a\":".repeat(63) + "{}" + "}".repeat(63))
        assertThrows(JsonParseError::class.java) { Json.parse("{\"a\":".repeat(64) + "{}" + "}".repeat(64)) }
        // Deep input is refused, not a stack overflow.
        assertThrows(JsonParseError::class.java) { Json.parse("[".repeat(100_000)) }
    }

    @Test
    fun integerRules() {
        assertEquals(JsonValue.Integer(Long.MAX_VALUE), Json.parse("9223372036854775807"))
        assertEquals(JsonValue.Integer(Long.MIN_VALUE), Json.parse("-9223372036854775808"))
        assertEquals(JsonValue.Integer(0), Json.parse("-0"))
        assertTrue(Json.parse("9223372036854775808") is JsonValue.Number)
        assertTrue(Json.parse("1.0") is JsonValue.Number)
        assertTrue(Json.parse("1e2") is JsonValue.Number)
        // Numbers that are not integers cannot be authenticated.
        TestSupport.expectThrows<VaultException.Malformed> { CanonicalEncoding.encode(Json.parse("[1.5]")) }
        // A counter must be an integer from 1 to 2^53 - 1.
        for (bad in listOf("0", "-1", "1.0", "1e0", "9007199254740992", "\"1\"")) {
            val reader = MemberReader(Json.parse("{\"counter\":$bad}") as JsonValue.Obj, "")
            TestSupport.expectThrows<VaultException.Malformed> { reader.positive("counter") }
        }
        assertEquals(9007199254740991L, MemberReader(Json.parse("{\"c\":9007199254740991}") as JsonValue.Obj, "").positive("c"))
    }

    @Test
    fun textOtherThanOneUtf8ValueIsRefused() {
        for (bytes in listOf(byteArrayOf(0xEF.toByte(), 0xBB.toByte(), 0xBF.toByte(), 0x7B.toByte(), 0x7D.toByte()),
            Crypto.utf8("{}x"), Crypto.utf8("{} {}"), Crypto.utf8("{}\"abc"), Crypto.utf8(""), Crypto.utf8("nullx"),
            byteArrayOf(0x22, 0xC0.toByte(), 0x80.toByte(), 0x22),
            byteArrayOf(0x22, 0xED.toByte(), 0xA0.toByte(), 0x80.toByte(), 0x22),
            Crypto.utf8("\"\\uD800\""), Crypto.utf8("\"\\uDC00\\uD800\""), Crypto.utf8("[1,\u000C2]"), Crypto.utf8("[1,\u000B2]"),
            Crypto.utf8("{\"a\":1,}"), Crypto.utf8("[01]"), Crypto.utf8("[NaN]"), Crypto.utf8("{'a':1}"), Crypto.utf8("/**/{}"))) {
            assertThrows(JsonParseError::class.java, { Json.parse(bytes) }, TestSupport.hex(bytes))
        }
        assertEquals(JsonValue.Str("\uD83D\uDE00"), Json.parse("\"\\uD83D\\uDE00\""))
        assertEquals(Json.obj(), Json.parse(" \t\r\n{} \n"))
    }

    @Test
    fun writerRoundTrips() {
        val text = "{\"b\":[1,-2,true,false,null,\"\\u0000\\\"\\\\/\\n\",1.5e3],\"a\":{\"\u00e9\":\"\uD83D\uDE00\"}}"
        val value = Json.parse(text)
        assertEquals(value, Json.parse(Json.write(value)))
    }
}
