package com.walletvault

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.IOException
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CountDownLatch
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/**
 * Issue 30, point 4 for Kotlin: [VaultSyncEngine.changes] long-polls, brings another device's save in as [sync] does,
 * never loses an edit made while it applies one (the edit-during-sync gate of the Swift tests), backs off on errors, on
 * 429 by its `Retry-After` and on long-polls answered at once (the engine's clock records the pauses: no test sleeps
 * them), and ends at cancellation while the server still holds its long-poll.
 *
 * The fake server holds a long-poll until a save or [FakeServer.releaseLongPolls], never by the fake clock, so a held
 * long-poll takes no fake time: a test whose long-poll is to count as held for its wait moves [clock] on by the wait
 * while the server holds it.
 */
class VaultChangesTest {
    private val clock = FakeClock()
    private val server = FakeServer()
    private val keys = TestDeviceKeys()

    /** What the server's long-polls answer instead, in order, before they reach [inner]. */
    private sealed class Scripted {
        class RateLimited(val retryAfterSeconds: Int) : Scripted()
        object Unavailable : Scripted()
        object NetworkError : Scripted()
        /** A 304 at once, as a server or proxy that ignores `wait` answers. */
        object NotModifiedAtOnce : Scripted()
    }

    /**
     * The device's transport: answers long-polls from [script] while it has entries, and once armed ([holdNext]) holds
     * the next request it matches until [release].
     */
    private class Interposed(private val inner: HttpTransport) : HttpTransport {
        val script = ConcurrentLinkedQueue<Scripted>()
        private var hold: ((HttpRequest) -> Boolean)? = null
        val arrived = CountDownLatch(1)
        private val released = CountDownLatch(1)

        fun holdNext(matcher: (HttpRequest) -> Boolean) = synchronized(this) { hold = matcher }
        fun release() = released.countDown()

        override suspend fun send(request: HttpRequest): HttpResponse {
            if (request.url.contains("&wait=")) {
                val body = Crypto.utf8("{\"error\":\"x\",\"message\":\"x\"}")
                when (val next = script.poll()) {
                    is Scripted.RateLimited -> return HttpResponse(429, mapOf("Retry-After" to "${next.retryAfterSeconds}"), body)
                    Scripted.Unavailable -> return HttpResponse(503, emptyMap(), body)
                    Scripted.NetworkError -> throw IOException("connection reset")
                    Scripted.NotModifiedAtOnce -> return HttpResponse(304, emptyMap(), ByteArray(0))
                    null -> Unit
                }
            }
            val held = synchronized(this) { hold?.takeIf { it(request) }?.also { hold = null } } != null
            if (held) {
                arrived.countDown()
                // Bounded so that a failing test ends; the test releases it long before.
                released.await(WAIT_MILLIS, TimeUnit.MILLISECONDS)
            }
            return inner.send(request)
        }
    }

    /** Runs [engine]'s [changes] on a coroutine of its own, collecting the reports. */
    private class Watcher(engine: VaultSyncEngine) : java.io.Closeable {
        val reports = LinkedBlockingQueue<SyncReport>()
        @Volatile var failure: Throwable? = null
        val job = GlobalScope.launch(Dispatchers.Default) {
            try {
                engine.changes(waitSeconds = 60) { reports.put(it) }
            } catch (e: CancellationException) {
                throw e
            } catch (e: Throwable) {
                failure = e
            }
        }

        fun next(): SyncReport? = reports.poll(WAIT_MILLIS, TimeUnit.MILLISECONDS)
        override fun close() = runBlocking { job.cancelAndJoin() }
    }

    /** Waits until [condition] holds; fails saying [what] when it does not within the deadline of a loaded machine. */
    private fun waitUntil(what: String, condition: () -> Boolean) {
        val deadline = System.nanoTime() + WAIT_MILLIS * 1_000_000
        while (!condition()) {
            if (System.nanoTime() > deadline) throw AssertionError("never: $what")
            Thread.sleep(2)
        }
    }

    /** A phone that created the vault with passport P-1, and a tablet sharing its device key that restored it. */
    /** [phoneAndTablet] after the phone saved a licence the tablet has not taken in, and with an edit on the tablet. */
    private fun tabletWithAnEditBehindThePhone(tabletTransport: HttpTransport = server): Pair<TestProfile, TestProfile> {
        val (phone, tablet) = phoneAndTablet(tabletTransport)
        phone.set("licence", "from the phone")
        phone.sync()
        tablet.set("card", "tablet edit")
        return Pair(phone, tablet)
    }

    private fun phoneAndTablet(tabletTransport: HttpTransport = server, url: String = "http://fake"): Pair<TestProfile, TestProfile> {
        val phone = TestProfile(clock, server, keys)
        // One attempt per request: each failure the script plays reaches the loop as one failure.
        val tablet = TestProfile(clock, tabletTransport, keys, url = url, retryPolicy = RetryPolicy(maxAttempts = 1))
        runSuspending { phone.engine.createVault() }
        phone.set("passport", "P-1")
        phone.sync()
        assertTrue(tablet.sync() is SyncReport.Restored)
        return Pair(phone, tablet)
    }

    private fun sleeps(): List<Long> = synchronized(clock) { clock.sleeps.toList() }

    @Test
    fun anotherDevicesSaveArrivesWithoutASync() {
        val (phone, tablet) = phoneAndTablet()
        Watcher(tablet.engine).use { watcher ->
            waitUntil("the tablet's long-poll waits") { server.waitingLongPolls.get() == 1 }
            phone.set("licence", "from the phone")
            phone.sync()
            val report = watcher.next()
            assertTrue(report is SyncReport.Restored, "expected the tablet to restore the phone's save, got $report")
            assertEquals("from the phone", tablet.value("licence"))
            assertEquals(phone.engine.status().syncedVersion, report!!.version)
            waitUntil("the tablet waits again") { server.waitingLongPolls.get() == 1 && server.answeredLongPolls.get() >= 1 }
            assertEquals(null, watcher.failure)
        }
        assertEquals(emptyList<Long>(), sleeps(), "nothing failed, so nothing paused")
    }

    @Test
    fun anEditMadeWhileAChangeIsAppliedIsKept() {
        val transport = Interposed(server)
        val (phone, tablet) = phoneAndTablet(transport)
        Watcher(tablet.engine).use { watcher ->
            waitUntil("the tablet's long-poll waits") { server.waitingLongPolls.get() == 1 }
            // The load of the sync the wake-up starts, not a long-poll (which carries `wait`).
            transport.holdNext { it.method == "GET" && it.url.contains("action=load") && !it.url.contains("&wait=") }
            phone.set("licence", "from the phone")
            phone.sync()
            assertTrue(transport.arrived.await(WAIT_MILLIS, TimeUnit.MILLISECONDS), "the tablet's sync never loaded")
            tablet.set("card", "edited while the phone's save came in")
            transport.release()
            assertNotNull(watcher.next(), "no report of the phone's save")
        }
        assertEquals("from the phone", tablet.value("licence"), "the phone's save never reached the tablet")
        assertEquals("edited while the phone's save came in", tablet.value("card"), "the edit is gone from the tablet")
        assertTrue(tablet.engine.status().hasLocalEdits, "the edit made meanwhile is still to be pushed")
        tablet.sync()
        phone.sync()
        assertEquals("edited while the phone's save came in", phone.value("card"), "the edit never reached the phone")
        assertEquals(tablet.engine.document()!!.liveValues, phone.engine.document()!!.liveValues)
    }

    @Test
    fun backsOffOnErrorsDoublingToAMinuteAndOn429ByItsRetryAfter() {
        val transport = Interposed(server)
        val (phone, tablet) = phoneAndTablet(transport)
        transport.script.addAll(listOf(Scripted.RateLimited(7), Scripted.Unavailable, Scripted.NetworkError) + List(6) { Scripted.Unavailable })
        Watcher(tablet.engine).use { watcher ->
            waitUntil("the tablet's long-poll waits once the failures are over") { server.waitingLongPolls.get() == 1 }
            // The 429 pauses its Retry-After and leaves the error backoff as it was; errors double it up to 60 s.
            assertEquals(listOf(7_000L, 1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 32_000L, 60_000L, 60_000L), sleeps())
            // A long-poll that ends well (304 here, held for its whole wait) starts the backoff over.
            transport.script.add(Scripted.Unavailable)
            val answered = server.answeredLongPolls.get()
            clock.now += 60_000
            server.releaseLongPolls()
            waitUntil("the tablet waits again") {
                server.answeredLongPolls.get() > answered && server.waitingLongPolls.get() == 1 && sleeps().size == 10
            }
            assertEquals(1_000L, sleeps().last(), sleeps().toString())
            assertEquals(10, sleeps().size, sleeps().toString())
            phone.set("licence", "after the failures")
            phone.sync()
            assertTrue(watcher.next() is SyncReport.Restored, "the loop still takes changes in")
            assertEquals("after the failures", tablet.value("licence"))
            assertEquals(null, watcher.failure)
        }
    }

    @Test
    fun longPollsAnsweredAtOnceBackOffDoublingToAMinuteUntilOneIsHeldOrFindsAChange() {
        val transport = Interposed(server)
        val (phone, tablet) = phoneAndTablet(transport)
        transport.script.addAll(List(8) { Scripted.NotModifiedAtOnce })
        Watcher(tablet.engine).use { watcher ->
            waitUntil("the tablet's long-poll waits once the quick answers are over") { server.waitingLongPolls.get() == 1 }
            // Each 304 that came back before half the wait passed is a failure: no flood, the pause doubles up to 60 s.
            assertEquals(listOf(1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 32_000L, 60_000L, 60_000L), sleeps())
            // A 304 after the whole wait (the fake clock moves on by it while the server holds) starts the backoff over.
            transport.script.add(Scripted.NotModifiedAtOnce)
            clock.now += 60_000
            server.releaseLongPolls()
            waitUntil("the tablet waits again after one quick answer") { sleeps().size == 9 && server.waitingLongPolls.get() == 1 }
            assertEquals(1_000L, sleeps().last(), sleeps().toString())
            // So does the sync that a long-poll finding a change starts, when it succeeds (the move found alone does
            // not: see aMoveFoundDoesNotStartTheBackoffOverForARateLimitedDevice): the backoff (2 s by now) is 1 s again.
            transport.script.add(Scripted.NotModifiedAtOnce)
            phone.set("licence", "after the quick answers")
            phone.sync()
            assertTrue(watcher.next() is SyncReport.Restored, "the loop still takes changes in")
            assertEquals("after the quick answers", tablet.value("licence"))
            waitUntil("the tablet waits again after one quick answer") { sleeps().size == 10 && server.waitingLongPolls.get() == 1 }
            assertEquals(1_000L, sleeps().last(), sleeps().toString())
            assertEquals(10, sleeps().size, sleeps().toString())
            assertEquals(null, watcher.failure)
        }
    }

    /**
     * A session the server refuses even after a fresh exchange ([BackupError.Unauthorized]: the user must sign in
     * again) ends the loop with that failure, as in Swift. Before, it was retried for ever, and each round asked the
     * app's OIDC token source again, which may prompt the user.
     */
    @Test
    fun aRefusedSessionEndsTheLoopInsteadOfAskingAgain() {
        val (_, tablet) = phoneAndTablet()
        server.unauthorizedNext = 2
        Watcher(tablet.engine).use { watcher ->
            waitUntil("the loop ends or pauses") { watcher.failure != null || sleeps().isNotEmpty() }
            val failure = watcher.failure
            assertTrue(failure is SyncException && failure.backupError is BackupError.Unauthorized, "the loop did not end with the refusal: $failure")
            assertEquals(emptyList<Long>(), sleeps(), "the loop paused to ask again")
        }
    }

    @Test
    fun aRateLimitedSavePausesTheLoopUntilItsNextAttemptAtMostAMinute() {
        val (phone, tablet) = tabletWithAnEditBehindThePhone()
        // Every save is refused with Retry-After 120: the tablet's sync reports RateLimited, and the loop syncs again
        // after each pause (no long-poll would find a change), so only the pauses keep it from a flood.
        server.rateLimitSaves = true
        Watcher(tablet.engine).use { watcher ->
            // Each report is delivered before its pause; a flood of reports (the bug) ends the wait too.
            waitUntil("three RateLimited reports and their pauses") { watcher.reports.size >= 3 && sleeps().size >= 3 || watcher.reports.size >= 50 }
            val reports = watcher.reports.toList().take(3)
            assertTrue(reports.all { it is SyncReport.RateLimited }, reports.toString())
            // 120 s left: a minute; 60 s left: those 60 s (above the 2 s backoff); a new 120 s window: a minute again.
            assertEquals(listOf(60_000L, 60_000L, 60_000L), sleeps().take(3), sleeps().toString())
            assertEquals(null, watcher.failure)
        }
        server.rateLimitSaves = false
        clock.now += 200_000
        // Pushed over the phone's version: the merge that met the cap made that version the tablet's synced one.
        assertTrue(tablet.sync() is SyncReport.Pushed, "the edit waited locally for the next attempt")
        phone.sync()
        assertEquals("tablet edit", phone.value("card"))
    }

    /**
     * A rate-limited device's edit is pushed by the loop once the cap lifts, with no other device saving meanwhile.
     * The merge that met the cap made the phone's version the tablet's synced one, so a long-poll after the pause
     * would be held until something else changed; the loop syncs again instead.
     */
    @Test
    fun aRateLimitedEditIsPushedByTheLoopOnceTheCapLifts() {
        val (phone, tablet) = tabletWithAnEditBehindThePhone()
        server.rateLimitSaves = true
        Watcher(tablet.engine).use { watcher ->
            assertTrue(watcher.next() is SyncReport.RateLimited)
            waitUntil("the pause after the report") { sleeps().isNotEmpty() }
            val pausedAt = synchronized(server) { server.requests.size }
            // Taken as the push is stored: once it is reported the loop goes on to long-poll, so the count of waiting
            // long-polls read after the report says nothing of what came before the push.
            var beforePush: List<HttpRequest>? = null
            server.beforeSaveStored = { if (beforePush == null) beforePush = synchronized(server) { server.requests.drop(pausedAt) } }
            server.rateLimitSaves = false
            clock.now += 200_000
            var report = watcher.next()
            while (report is SyncReport.RateLimited) report = watcher.next()
            assertTrue(report is SyncReport.Pushed, "the loop did not push the edit: $report")
            val longPolls = beforePush.orEmpty().filter { it.url.contains("wait=") }
            assertEquals(emptyList<HttpRequest>(), longPolls, "the loop waited on a long-poll before the push")
            assertEquals(null, watcher.failure)
        }
        phone.sync()
        assertEquals("tablet edit", phone.value("card"))
    }

    /**
     * A long-poll that finds a move is no success yet, as in Swift's `watchChanges`: the sync it leads to decides. A
     * device whose saves keep meeting the server's cap, with a Retry-After short enough that the backoff and not the
     * time left decides each pause, backs off doubling to a minute. Before, every long-poll that found the server's
     * newer version (which it does at once while the device cannot save) started the backoff over, so the loop synced
     * and was refused once a second for as long as the cap held.
     */
    @Test
    fun aMoveFoundDoesNotStartTheBackoffOverForARateLimitedDevice() {
        val (_, tablet) = tabletWithAnEditBehindThePhone()
        server.rateLimitRetryAfterSeconds = 1
        server.rateLimitSaves = true
        Watcher(tablet.engine).use { watcher ->
            // A flood of reports (the bug) ends the wait too.
            waitUntil("seven pauses") { sleeps().size >= 7 || watcher.reports.size >= 50 }
            // 1 s left each time: the backoff decides, and only the RateLimited reports step it.
            assertEquals(listOf(1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 32_000L, 60_000L), sleeps().take(7), sleeps().toString())
            val reports = watcher.reports.toList()
            assertTrue(reports.isNotEmpty() && reports.all { it is SyncReport.RateLimited }, reports.toString())
            assertEquals(null, watcher.failure)
        }
        server.rateLimitSaves = false
        clock.now += 2_000
        // Pushed over the phone's version: the merge that met the cap made that version the tablet's synced one.
        assertTrue(tablet.sync() is SyncReport.Pushed, "the edit waited locally for the next attempt")
    }

    @Test
    fun cancellingEndsTheLoopWhileTheServerStillHoldsTheLongPoll() {
        LoopbackServer(server).use { loop ->
            val (_, tablet) = phoneAndTablet(UrlConnectionTransport(), loop.url)
            val watcher = Watcher(tablet.engine)
            waitUntil("the tablet's long-poll waits") { server.waitingLongPolls.get() == 1 }
            val requests = synchronized(server) { server.requests.size }
            watcher.close()
            assertTrue(watcher.job.isCancelled && watcher.job.isCompleted, "the loop did not end")
            assertEquals(0, server.answeredLongPolls.get(), "the loop ended only once the server answered its long-poll")
            assertEquals(requests, synchronized(server) { server.requests.size }, "a request after the cancellation")
            assertEquals(null, watcher.failure)
        }
    }

    @Test
    fun anErasureElsewhereEndsTheLoopWithNoVault() {
        val (phone, tablet) = phoneAndTablet()
        Watcher(tablet.engine).use { watcher ->
            waitUntil("the tablet's long-poll waits") { server.waitingLongPolls.get() == 1 }
            runSuspending { phone.engine.eraseAccount() }
            waitUntil("the loop ends") { watcher.job.isCompleted }
            val failure = watcher.failure
            assertTrue(failure is SyncException && failure.code == SyncException.Code.NO_VAULT, "ended with $failure")
        }
        assertEquals("P-1", tablet.value("passport"), "the tablet's copy stays")
    }

    private companion object {
        /** How long a test waits for something that takes milliseconds: only the bound of a loaded machine, never a measure. */
        const val WAIT_MILLIS = 60_000L
    }
}
