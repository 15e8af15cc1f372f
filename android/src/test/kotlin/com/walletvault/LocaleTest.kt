package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource
import java.util.Locale

/**
 * Issue 27 point 6: under a default locale whose digits are not ASCII (Arabic-Indic, Extended Arabic-Indic,
 * Devanagari), everything the library writes (timestamps, codes, fingerprints) is still ASCII, and a vault is created
 * and read back. `android/build.sh test` also runs the whole suite under each of these default locales.
 */
class LocaleTest {
    @ParameterizedTest
    @ValueSource(strings = ["ar-EG", "fa-IR", "ar-SA", "hi-IN-u-nu-deva"])
    fun aVaultIsCreatedAndReadUnderADefaultLocaleWithoutAsciiDigits(tag: String) {
        val saved = Locale.getDefault()
        Locale.setDefault(Locale.forLanguageTag(tag))
        try {
            // The locale really formats numbers with other digits, or this test would prove nothing.
            assertTrue(String.format("%d", 2026) != "2026", "$tag formats 2026 as ASCII")
            val server = FakeServer()
            val engine = TestProfile(FakeClock(), server).engine
            assertTrue(runSuspending { engine.createVault(listOf(Recipient(RecoveryCodeKek(RecoveryCode.generate()), "Recovery code"))) } is SyncReport.Created)
            engine.edit { d, now -> d.set("passport", Json.str("P-1"), now) }
            assertTrue(runSuspending { engine.sync() } is SyncReport.Pushed)
            val envelope = VaultEnvelope.parse(server.current!!.blob)
            assertAscii(envelope.updatedUtc)
            assertNotNull(UtcTime.parse(envelope.updatedUtc), envelope.updatedUtc)
            envelope.entries.mapNotNull { it.created }.forEach { assertAscii(it) }
            assertAscii(server.current!!.syncId)
            assertAscii(String(engine.document()!!.encoded(), Charsets.UTF_8))
            assertAscii(engine.anchor()!!.shortFingerprint)
            assertAscii(engine.pairingRequest().shortAuthenticationString)
            assertEquals("P-1", engine.document()!!.liveValues["passport"]!!.string)
        } finally {
            Locale.setDefault(saved)
        }
    }

    private fun assertAscii(text: String) = assertTrue(text.all { it.toInt() < 0x80 }, "not ASCII: $text")
}
