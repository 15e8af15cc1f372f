package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource
import java.io.IOException
import java.nio.file.Files
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger
import javax.crypto.spec.SecretKeySpec

/**
 * A phone whose enrolment save after confirming its pairing (seed §5: its own Keystore entry in, the pairing entry
 * out, in one save) failed is enrolled by a later sync, as in the Swift SDK's PlatformKeyTests (73d347d). The pairing
 * request's key is a software P-256 key of its own, never the Keystore key, so until that save a phone is a member
 * only through the pairing entry. Parameterised by the phone's API level: 34 holds an EC agreement key, 29 the §3 AES
 * key.
 */
class InterruptedEnrolmentTest {
    private val server = FakeServer()
    private val clock = FakeClock()

    /** Fails the saves sent through it, one outcome each as queued (0: a network error, else that status), then passes them on. */
    private class LossySaves(private val inner: HttpTransport) : HttpTransport {
        val outcomes = ConcurrentLinkedQueue<Int>()
        val saves = AtomicInteger()
        override suspend fun send(request: HttpRequest): HttpResponse {
            if (!request.url.contains("action=save")) return inner.send(request)
            saves.incrementAndGet()
            val status = outcomes.poll() ?: return inner.send(request)
            if (status == 0) throw IOException("connection reset")
            val headers = mapOf("Content-Type" to "application/json") + (if (status == 429) mapOf("Retry-After" to "3600") else emptyMap())
            return HttpResponse(status, headers, Crypto.utf8("{\"error\":\"failed\",\"message\":\"failed\"}"))
        }
    }

    private inner class Device(label: String, sdk: Int?, transport: HttpTransport = server) {
        val store = LocalVaultStore(Files.createTempDirectory("wv-enrol-$label").toFile(), SecretKeySpec(Crypto.randomBytes(32), "AES"))
        val keys: DeviceKeyStore = if (sdk == null) SoftwareDeviceKeys(store) else KeystoreDeviceKeys(FakeKeystore(sdk, strongBox = true), FakePrompt(), store)
        // Two attempts per request, as the Swift client makes.
        val engine = VaultSyncEngine(store, BackupClient("http://fake", SessionTokenProvider("http://fake", { "oidc-ok" }, transport, clock), transport,
            clock, RetryPolicy(maxAttempts = 2)), keys, label, clock = clock)
        fun sync() = runSuspending { engine.sync() }
        fun set(id: String, value: String) { clock.now += 1000; engine.edit { d, now -> d.set(id, Json.str(value), now) } }
        fun values() = engine.document()!!.liveValues.mapValues { it.value.string }
    }

    /** A laptop's vault and a phone paired to it whose enrolment save met [failures] (as [LossySaves] plays them). */
    private inner class Interrupted(sdk: Int, failures: List<Int> = listOf(0, 503)) {
        val laptop = Device("Laptop", null)
        val lossy = LossySaves(server)
        val phone = Device("Phone", sdk, lossy)
        val pairingKekId: String
        val ownKekId: String
        /** What confirming the pairing threw. */
        val pairingError: SyncException?
        /** What confirming the pairing returned, when it did not throw. */
        var pairingReport: SyncReport? = null

        init {
            runSuspending { laptop.engine.createVault() }
            laptop.set("passport", "P1")
            laptop.sync()
            val request = phone.engine.pairingRequest()
            pairingKekId = PublicKeyRecipient(request.publicKey).kekId
            val approved = runSuspending { laptop.engine.approve(PairingRequest.parse(request.encoded)) }
            lossy.outcomes.addAll(failures)
            pairingError = try {
                pairingReport = runSuspending { phone.engine.confirmPairing(approved.confirmationCode) }
                null
            } catch (e: SyncException) {
                e
            }
            ownKekId = phone.keys.current()!!.kekId
            assertTrue(pairingKekId != ownKekId, "the pairing key is the Keystore key")
            assertEquals(mapOf("passport" to "P1"), phone.values(), "the restore was committed before the enrolment")
            assertTrue(storedKekIds().contains(pairingKekId))
            assertFalse(storedKekIds().contains(ownKekId))
        }

        fun storedKekIds(): List<String> = VaultEnvelope.parse(server.current!!.blob).entries.map { it.kekId }

        /** The server's vault has the phone's own entry and no pairing entry, and the laptop's entry is still there. */
        fun expectEnrolled() {
            val stored = storedKekIds()
            assertTrue(stored.contains(ownKekId), "the phone's own entry was not enrolled")
            assertFalse(stored.contains(pairingKekId), "the pairing entry was not dropped")
            assertEquals(2, stored.size, stored.toString())
        }

        /** Both devices read what the other saves from here on. */
        fun expectBothRead(expected: Map<String, String>) {
            laptop.sync()
            assertEquals(expected, laptop.values())
            laptop.set("after", "L")
            laptop.sync()
            phone.sync()
            assertEquals(expected + ("after" to "L"), phone.values())
        }
    }

    @ParameterizedTest
    @ValueSource(ints = [34, 29])
    fun anUpToDateSyncEnrollsThePhoneWhoseEnrolmentSaveFailed(sdk: Int) {
        val paired = Interrupted(sdk)
        assertEquals(SyncException.Code.SERVER, paired.pairingError?.code, "the enrolment's save did not fail")
        val report = paired.phone.sync()
        assertTrue(report is SyncReport.Pushed, "the sync did not save the enrolment: $report")
        paired.expectEnrolled()
        val saves = paired.lossy.saves.get()
        assertTrue(paired.phone.sync() is SyncReport.UpToDate, "an enrolled phone has nothing to save")
        assertEquals(saves, paired.lossy.saves.get())
        paired.expectBothRead(mapOf("passport" to "P1"))
    }

    @ParameterizedTest
    @ValueSource(ints = [34, 29])
    fun aPushEnrollsThePhoneWhoseEnrolmentSaveFailed(sdk: Int) {
        val paired = Interrupted(sdk, listOf(0, 0))
        assertEquals(SyncException.Code.OFFLINE, paired.pairingError?.code, "the enrolment's save did not fail")
        paired.phone.set("licence", "L1")
        val report = paired.phone.sync()
        assertTrue(report is SyncReport.Pushed, "the phone's edit was not pushed: $report")
        paired.expectEnrolled()
        paired.expectBothRead(mapOf("passport" to "P1", "licence" to "L1"))
    }

    @ParameterizedTest
    @ValueSource(ints = [34, 29])
    fun aMergeEnrollsThePhoneWhoseEnrolmentSaveFailed(sdk: Int) {
        val paired = Interrupted(sdk)
        paired.laptop.set("a-only", "A")
        paired.laptop.sync()
        paired.phone.set("b-only", "B")
        val report = paired.phone.sync()
        assertTrue(report is SyncReport.Merged, "the phone's edit was not merged: $report")
        paired.expectEnrolled()
        paired.expectBothRead(mapOf("passport" to "P1", "a-only" to "A", "b-only" to "B"))
    }

    /**
     * A 429 on the enrolment postpones it as it does an edit: confirming reports the rate limit as a sync does (as in
     * Swift, where confirming syncs), with the next allowed attempt recorded; the syncs before it send no save, the
     * first after it enrolls. Before, confirming threw `SERVER` and recorded no time, so the first sync sent the save
     * again into the cap.
     */
    @ParameterizedTest
    @ValueSource(ints = [34])
    fun aRateLimitedEnrolmentWaitsForTheNextAllowedAttempt(sdk: Int) {
        val paired = Interrupted(sdk, listOf(429))
        assertEquals(null, paired.pairingError, "confirming threw instead of reporting the rate limit")
        val limited = paired.pairingReport
        assertTrue(limited is SyncReport.RateLimited, "confirming did not report the rate limit: $limited")
        val next = (limited as SyncReport.RateLimited).nextAttemptAt
        assertEquals(next, paired.phone.engine.status().nextAttemptAt)
        assertEquals(clock.now + 3_600_000L, next, "the next allowed attempt is not the server's Retry-After")
        val saves = paired.lossy.saves.get()
        val stored = paired.storedKekIds()
        assertTrue(paired.phone.sync() is SyncReport.UpToDate, "the enrolment does not wait for the next allowed attempt")
        assertEquals(saves, paired.lossy.saves.get(), "a save was sent before the next allowed attempt")
        assertEquals(stored, paired.storedKekIds())
        clock.now = next + 1
        assertTrue(paired.phone.sync() is SyncReport.Pushed)
        paired.expectEnrolled()
    }
}
