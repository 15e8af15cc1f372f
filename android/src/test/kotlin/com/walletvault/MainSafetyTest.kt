package com.walletvault

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlin.coroutines.resume
import kotlin.coroutines.suspendCoroutine

/**
 * Issue 27 point 5: the engine's calls are main-safe and cooperative. Blocking work (HTTP, files, Argon2id, the
 * Keystore) runs on the engine's I/O dispatcher, never on the caller's thread; cancelling the caller's job or a
 * `withTimeout` ends a call within the request it is waiting on (a held HTTP read is disconnected), and no retry
 * follows; a conflict handler that the UI resumes on its main thread does not drag the upload onto that thread.
 */
class MainSafetyTest {
    private val clock = FakeClock()
    private val mainExecutor = Executors.newSingleThreadExecutor { r -> Thread(r, MAIN).also { it.isDaemon = true } }
    private val main = mainExecutor.asCoroutineDispatcher()

    @AfterEach
    fun stopMain() { mainExecutor.shutdownNow() }

    @Test
    fun cancellingTheCallersJobEndsASyncWhileItsRequestIsHeld() {
        LoopbackServer().use { loop ->
            val phone = TestProfile(clock, UrlConnectionTransport(), url = loop.url)
            runSuspending { phone.engine.createVault() }
            phone.set("passport", "P-1")
            loop.holdLoads(HOLD_MILLIS)
            val outcome = runBlocking {
                val call = async(Dispatchers.Default) { phone.engine.sync() }
                assertTrue(loop.loadHeld.await(30, TimeUnit.SECONDS), "the sync reached the server")
                delay(100)
                call.cancel()
                try { "returned ${call.await()}" } catch (e: CancellationException) { "cancelled" }
            }
            assertFalse(loop.released, "the call ended only once the server answered the held request")
            assertEquals("cancelled", outcome)
            val requests = loop.fake.requests.size
            Thread.sleep(300)
            assertEquals(requests, loop.fake.requests.size, "no attempt after cancellation")
            assertTrue(phone.engine.status().hasLocalEdits, "the edit is still pending")
        }
    }

    @Test
    fun withTimeoutEndsASyncWhileItsRequestIsHeld() {
        LoopbackServer().use { loop ->
            val phone = TestProfile(clock, UrlConnectionTransport(), url = loop.url)
            runSuspending { phone.engine.createVault() }
            loop.holdLoads(HOLD_MILLIS)
            val outcome = runBlocking(Dispatchers.Default) {
                try { "returned ${withTimeout(300) { phone.engine.sync() }}" } catch (e: TimeoutCancellationException) { "timed out" }
            }
            assertFalse(loop.released, "the call ended only once the server answered the held request")
            assertEquals("timed out", outcome)
        }
    }

    @Test
    fun callsFromTheMainThreadSendNothingFromIt() {
        val server = FakeServer()
        val phone = TestProfile(clock, server)
        runBlocking(main) {
            phone.engine.createVault()
            phone.set("passport", "P-1")
            phone.engine.sync()
        }
        assertTrue(server.requestThreads.isNotEmpty())
        assertTrue(server.requestThreads.none { it == MAIN }, "requests sent from the main thread: ${server.requestThreads}")
    }

    @Test
    fun aConflictHandlerResumedOnTheMainThreadDoesNotRunTheUploadThere() {
        val server = FakeServer()
        val keys = TestDeviceKeys()
        val a = TestProfile(clock, server, keys)
        // The dialog's answer arrives on the main thread, as a click handler resumes the coroutine there.
        val b = TestProfile(clock, server, keys, handler = { _ ->
            suspendCoroutine<ConflictResolution> { continuation -> mainExecutor.execute { continuation.resume(ConflictResolution.KEEP_LOCAL) } }
        })
        runSuspending { a.engine.createVault() }
        a.set("passport", "P-1")
        runSuspending { a.engine.sync() }
        runSuspending { b.engine.sync() }
        a.set("passport", "from A")
        runSuspending { a.engine.sync() }
        b.set("passport", "from B")
        val before = server.requestThreads.size
        val report = runSuspending { b.engine.sync() }
        assertTrue(report is SyncReport.Merged, report.toString())
        val threads = server.requestThreads.drop(before)
        assertTrue(server.requests.drop(before).any { it.url.contains("action=save") }, "the decision was saved")
        assertTrue(threads.none { it == MAIN }, "requests sent from the main thread: $threads")
    }

    @Test
    fun theConflictContextCarriesBothSidesValues() {
        val server = FakeServer()
        val keys = TestDeviceKeys()
        var shown: ConflictContext? = null
        val a = TestProfile(clock, server, keys)
        val b = TestProfile(clock, server, keys, handler = { context -> shown = context; ConflictResolution.KEEP_CLOUD })
        runSuspending { a.engine.createVault() }
        a.set("passport", "P-1")
        a.set("licence", "L-1")
        a.sync()
        b.sync()
        a.set("passport", "from A")
        a.engine.edit { d, now -> d.delete("licence", now) }
        a.sync()
        b.set("passport", "from B")
        b.set("licence", "L-B")
        val cloudTime = clock.now - 2000
        assertTrue(b.sync() is SyncReport.Restored, "KEEP_CLOUD takes the cloud's version")
        val context = shown ?: throw AssertionError("the handler was not asked")
        assertEquals(listOf("licence", "passport"), context.conflictingItems)
        assertEquals(context.conflictingItems, context.items.map { it.id })
        val passport = context.items.single { it.id == "passport" }
        assertEquals("from B", passport.local!!.string)
        assertEquals("from A", passport.cloud!!.string)
        assertEquals(clock.now - 1000, passport.localModifiedAt)
        assertEquals(cloudTime, passport.cloudModifiedAt)
        val licence = context.items.single { it.id == "licence" }
        assertEquals("L-B", licence.local!!.string)
        assertEquals(null, licence.cloud, "deleted in the cloud")
        assertEquals("from A", b.value("passport"))
    }

    private companion object {
        const val MAIN = "main"
        /** How long a held request waits for an answer: far longer than the calls that must end before it. */
        const val HOLD_MILLIS = 10_000L
    }
}
