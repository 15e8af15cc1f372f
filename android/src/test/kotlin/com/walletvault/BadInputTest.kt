package com.walletvault

import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Every reader of outside input answers garbage with its typed error (or null), never with anything else. */
class BadInputTest {
    private val random = java.util.Random(16)
    private val pieces = listOf("wvpair1.", ".", "-", "_", "A", "z", "0", "=", "{", "}", "[", "]", "\"", ":", ",", "\\u", "\\", "é", "\uD800",
        "items", "modified", "2026-01-01T00:00:00Z", "null", "true", "1e999", "-0", " ", "\n", "O", "I", "L", "U")

    private fun garbage(): String = (0 until random.nextInt(60)).joinToString("") { pieces[random.nextInt(pieces.size)] }

    @Test
    fun garbageIsRefusedWithTypedErrors() {
        var refusals = 0
        repeat(4000) {
            val text = garbage()
            try { PairingRequest.parse(text) } catch (e: SyncException) { refusals++ }
            try { RecoveryCode.parse(text) } catch (e: VaultException.InvalidRecoveryCode) { refusals++ }
            try { VaultDocument.parse(Crypto.utf8(text)) } catch (e: IllegalArgumentException) { refusals++ }
            try { Json.parse(text) } catch (e: JsonParseError) { refusals++ }
            try { VaultEnvelope.parse(Crypto.utf8(text)) } catch (e: VaultException) { refusals++ }
            Base64Url.decode(text)
            UtcTime.parse(text)
            val bytes = ByteArray(random.nextInt(40)).also { random.nextBytes(it) }
            try { Json.parse(bytes) } catch (e: JsonParseError) { refusals++ }
            try { VaultEnvelope.parse(bytes) } catch (e: VaultException) { refusals++ }
        }
        assertTrue(refusals > 20_000, "refusals $refusals")
    }

    @Test
    fun aValidDocumentRoundTripsAndTimestampsAreStrict() {
        val document = VaultDocument()
        document.set("a", Json.obj("x" to Json.int(1)), 1_790_000_000_123)
        document.delete("b", 1_790_000_000_456)
        assertTrue(VaultDocument.parse(document.encoded()) == document)
        for (bad in listOf("2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:00+01:00", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00.Z"))
            assertTrue(UtcTime.parse(bad) == null, bad)
        assertTrue(UtcTime.parse("2026-08-12T19:00:00.5+00:00") == UtcTime.parse("2026-08-12T19:00:00.500Z"))
        assertTrue(UtcTime.formatted(UtcTime.parse("2024-02-29T23:59:59.999z")!!) == "2024-02-29T23:59:59.999Z")
    }
}
