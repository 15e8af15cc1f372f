package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import java.io.IOException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger

class NetworkTest {
    private val server = FakeServer()
    private val clock = FakeClock()
    private val tokens = SessionTokenProvider("http://fake", { "oidc-ok" }, server, clock)
    private val client = BackupClient("http://fake", tokens, server, clock)
    private val blob = runSuspending {
        VaultSealer(InMemoryCounterStore()).create(TestSupport.plaintext, "v", listOf(Recipient(StoredKeyKek.generate(), "k"))).blob
    }

    @Test
    fun concurrentCallersShareOneExchange() {
        val release = CountDownLatch(1)
        val waiting = CountDownLatch(1)
        server.beforeExchange = { waiting.countDown(); release.await(5, TimeUnit.SECONDS) }
        val pool = Executors.newFixedThreadPool(8)
        val results = (1..8).map { pool.submit<String> { runSuspending { tokens.token() } } }
        assertTrue(waiting.await(5, TimeUnit.SECONDS))
        Thread.sleep(200) // the other seven are now waiting on the one exchange
        release.countDown()
        val values = results.map { it.get(5, TimeUnit.SECONDS) }.toSet()
        pool.shutdown()
        assertEquals(1, server.exchanges.get())
        assertEquals(setOf("session-1"), values)
    }

    @Test
    fun aCancelledCallerDoesNotFailTheOthersWaitingOnTheExchange() = runBlocking {
        val gate = CompletableDeferred<String>()
        val tokens = SessionTokenProvider("http://fake", { gate.await() }, server, clock)
        val leader = async(Dispatchers.Default) { tokens.token() }
        while (tokens.exchangeCount == 0) delay(1)
        val follower = async(Dispatchers.Default) { tokens.token() }
        val quitter = async(Dispatchers.Default) { tokens.token() }
        delay(100)
        leader.cancel()
        withTimeout(5_000) { leader.join() }
        // A waiter cancelled itself stops waiting at once, while the exchange still waits on the token source.
        quitter.cancel()
        withTimeout(5_000) { quitter.join() }
        gate.complete("oidc-ok")
        val token = try { withTimeout(5_000) { follower.await() } } catch (e: CancellationException) {
            fail<String>("the follower, never cancelled, failed with $e")
        }
        assertEquals("session-1", token)
        assertEquals(1, server.exchanges.get())
        assertEquals("session-1", tokens.token())
    }

    /**
     * Inside the refresh margin the token is renewed in the background, as Swift's `SessionTokenProvider` does: the
     * caller that notices gets the still-valid token at once, so do the callers while the exchange runs (no second
     * one starts), and the callers after it the new token. The exchange is held here until the test releases it;
     * before, the first caller inside the margin waited for the whole exchange (and got the new token).
     */
    @Test
    fun tokenIsRefreshedInTheBackgroundBeforeItExpires() = runBlocking {
        val first = tokens.token()
        clock.now += 500_000 // 8 min 20 s: still before the 90 s margin
        assertEquals(first, tokens.token())
        assertEquals(1, server.exchanges.get())
        val started = CountDownLatch(1)
        val release = CountDownLatch(1)
        server.beforeExchange = { started.countDown(); release.await(60, TimeUnit.SECONDS) }
        clock.now += 20_000 // 8 min 40 s: inside the margin
        assertEquals(first, withTimeoutOrNull(10_000) { tokens.token() }, "the caller inside the margin waited for the exchange")
        assertTrue(started.await(10, TimeUnit.SECONDS), "no refresh started")
        assertEquals(first, withTimeoutOrNull(10_000) { tokens.token() }, "a caller during the refresh waited for it")
        assertEquals(2, tokens.exchangeCount, "a second refresh started while one ran")
        release.countDown()
        val second = eventually("the refreshed token is handed out") { tokens.token().takeIf { it != first } }
        assertEquals("session-2", second)
        assertEquals(2, server.exchanges.get())
    }

    /**
     * A failed background refresh costs no caller a wait: the still-valid token is handed out, and the next caller
     * starts another refresh. Once the token has expired, a caller waits for the exchange (here the one in flight).
     */
    @Test
    fun aFailedEarlyRefreshKeepsTheTokenAndAnExpiredOneWaitsForTheExchange() = runBlocking {
        // Each exchange takes the next answer of the app's token source, which waits until the test gives it.
        val answers = Channel<() -> String>(Channel.UNLIMITED)
        val tokens = SessionTokenProvider("http://fake", { answers.receive()() }, server, clock)
        answers.send { "oidc-ok" }
        val first = tokens.token()
        clock.now += 520_000 // inside the margin: a refresh starts, waiting for its answer
        assertEquals(first, withTimeoutOrNull(10_000) { tokens.token() }, "the caller inside the margin waited for the exchange")
        answers.send { throw IOException("offline") }
        // Every caller meanwhile gets the valid token at once; once the failed refresh is over, one starts another.
        eventually("a new refresh after the failed one") {
            assertEquals(first, withTimeoutOrNull(10_000) { tokens.token() }, "a caller waited after the refresh failed")
            if (tokens.exchangeCount == 3) Unit else null
        }
        clock.now += 100_000 // past the token's expiry: the caller must wait for the refresh in flight
        val waiting = async(Dispatchers.Default) { tokens.token() }
        delay(200)
        assertTrue(waiting.isActive, "a caller holding an expired token did not wait for the exchange")
        answers.send { "oidc-ok" }
        assertEquals("session-2", withTimeout(10_000) { waiting.await() })
        assertEquals(3, tokens.exchangeCount)
    }

    /**
     * A provider whose token source, on each call [stick] says so, blocks its thread until [stuck] is released, ignoring
     * cancellation (the worst case), and counts the call in [stuckCalls]; every other call answers at once.
     */
    private fun providerStuckWhen(stuck: CountDownLatch, stuckCalls: AtomicInteger, timeoutMillis: Long, stick: () -> Boolean) =
        SessionTokenProvider("http://fake", {
            if (stick()) {
                stuckCalls.incrementAndGet()
                stuck.await(60, TimeUnit.SECONDS)
            }
            "oidc-ok"
        }, server, clock, accessTokenTimeoutMillis = timeoutMillis)

    /**
     * A token from [tokens], asked again (at most 20 times) while the exchange fails: on a machine so loaded that even
     * an answering source outlasts a test's short timeout, each call starts a new exchange.
     */
    private suspend fun eventualToken(tokens: SessionTokenProvider): String? {
        repeat(20) {
            try { return withTimeout(10_000) { tokens.token() } } catch (e: BackupError.Transport) { }
        }
        return null
    }

    /**
     * An OIDC token source that does not answer fails every caller waiting on its exchange with [BackupError.Transport]
     * once its timeout has passed, and the next call starts a new exchange rather than wait on the stuck one; before,
     * every caller waited as long as the source did. The stuck source answers at the end, late.
     */
    @Test
    fun aTokenSourceThatOutlastsItsTimeoutFailsAsTransportAndTheNextCallStartsAfresh() = runBlocking {
        val stuck = CountDownLatch(1)
        val stuckCalls = AtomicInteger()
        val calls = AtomicInteger()
        val tokens = providerStuckWhen(stuck, stuckCalls, 300) { calls.incrementAndGet() == 1 }
        val callers = (1..3).map { async(Dispatchers.Default) { try { tokens.token(); null } catch (e: BackupError) { e } } }
        for (caller in callers) {
            val failure = withTimeout(10_000) { caller.await() }
            assertTrue(failure is BackupError.Transport, "a caller of a stuck exchange got $failure")
        }
        // The next call starts an exchange of its own, which the source answers, without the stuck one ending.
        val token = eventualToken(tokens)
        assertTrue(token?.startsWith("session-") == true, "no token after the stuck exchange: $token")
        assertEquals(1, stuckCalls.get())
        assertTrue(calls.get() >= 2)
        stuck.countDown()
    }

    /**
     * A background refresh whose token source sticks ends at the source's timeout though no one waits on it, so the
     * first caller after the token expires starts a new exchange at once rather than wait on the stuck one.
     */
    @Test
    fun aStuckBackgroundRefreshEndsAtItsTimeoutAndTheFirstCallerAfterExpiryStartsAfresh() = runBlocking {
        val stuck = CountDownLatch(1)
        val stuckCalls = AtomicInteger()
        val stickNext = AtomicBoolean(false)
        val tokens = providerStuckWhen(stuck, stuckCalls, 1_000) { stickNext.getAndSet(false) }
        val first = eventualToken(tokens)!!
        stickNext.set(true)
        clock.now += 520_000 // inside the margin: the refresh starts in the background and sticks
        assertEquals(first, withTimeoutOrNull(10_000) { tokens.token() }, "the caller inside the margin waited for the exchange")
        eventually("the background refresh started") { if (stuckCalls.get() == 1) Unit else null }
        delay(1_100)
        clock.now += 100_000
        val after = eventualToken(tokens)
        assertTrue(after != null && after != first, "no new token after expiry: $after")
        // Still unanswered: the token came without anyone waiting for the stuck source.
        assertEquals(1L, stuck.count)
        stuck.countDown()
    }

    /** [probe]'s first non-null value, asked for again until then; fails saying [what] past the bound of a loaded machine. */
    private suspend fun <T : Any> eventually(what: String, probe: suspend () -> T?): T {
        val deadline = System.nanoTime() + 30_000_000_000L
        while (true) {
            probe()?.let { return it }
            if (System.nanoTime() > deadline) throw AssertionError("never: $what")
            delay(2)
        }
    }

    @Test
    fun a401RenewsTheSessionOnceThenGivesUp() {
        runSuspending { client.save(blob) }
        server.unauthorizedNext = 1
        assertTrue(runSuspending { client.load() } != null)
        assertEquals(2, server.exchanges.get())
        server.unauthorizedNext = 2
        try { runSuspending { client.load() }; fail<Unit>("no error") } catch (e: BackupError.Unauthorized) {}
        assertEquals(3, server.exchanges.get())
        // A refused OIDC token is Unauthorized too.
        val refused = BackupClient("http://fake", SessionTokenProvider("http://fake", { "oidc-bad" }, server, clock), server, clock)
        try { runSuspending { refused.load() }; fail<Unit>("no error") } catch (e: BackupError.Unauthorized) {}
    }

    /** A 429 from the session-token endpoint (a limiter in front of it) is RateLimited with its Retry-After, as Swift's. */
    @Test
    fun aRateLimitedExchangeIsRateLimited() {
        val limiter = object : HttpTransport {
            override suspend fun send(request: HttpRequest) =
                HttpResponse(429, mapOf("Retry-After" to "42", "Content-Type" to "application/json"), Crypto.utf8("{\"error\":\"rate_limited\"}"))
        }
        val limited = SessionTokenProvider("http://fake", { "oidc-ok" }, limiter, clock)
        try { runSuspending { limited.token() }; fail<Unit>("a token from a 429") } catch (e: BackupError.RateLimited) { assertEquals(42, e.retryAfterSeconds) }
    }

    @Test
    fun preconditionsAndConditionalLoads() {
        val first = runSuspending { client.save(blob, BackupClient.Precondition.IfNoneStored) }
        assertEquals("*", server.requests.last().headers["If-None-Match"])
        try { runSuspending { client.save(blob, BackupClient.Precondition.IfNoneStored) }; fail<Unit>("no conflict") } catch (e: BackupError.Conflict) {
            assertEquals(first, e.currentSyncId)
        }
        val second = runSuspending { client.save(blob, BackupClient.Precondition.IfMatch(first)) }
        assertEquals("\"$first\"", server.requests.last().headers["If-Match"])
        try { runSuspending { client.save(blob, BackupClient.Precondition.IfMatch(first)) }; fail<Unit>("no conflict") } catch (e: BackupError.Conflict) {
            assertEquals(second, e.currentSyncId)
        }
        assertNull(runSuspending { client.load(ifNoneMatch = second) })
        assertEquals("\"$second\"", server.requests.last().headers["If-None-Match"])
        assertEquals(second, runSuspending { client.load(ifNoneMatch = first) }!!.syncId)
        assertEquals(first, runSuspending { client.load(syncId = first) }!!.syncId)
        assertEquals(listOf(second, first), runSuspending { client.versions() }.map { it.syncId })
    }

    @Test
    fun rateLimitTooLargeAndNotFound() {
        try { runSuspending { client.load() }; fail<Unit>("no error") } catch (e: BackupError.NotFound) {}
        server.rateLimitSaves = true
        try { runSuspending { client.save(blob) }; fail<Unit>("no error") } catch (e: BackupError.RateLimited) { assertEquals(120, e.retryAfterSeconds) }
        val before = server.requests.size
        try { runSuspending { client.save(ByteArray(1_048_577)) }; fail<Unit>("no error") } catch (e: BackupError.BlobTooLarge) { assertEquals(1_048_577, e.bytes) }
        assertEquals(before, server.requests.size, "a too-large blob is refused before any request")
    }

    /** As Swift's `aSaveAnswerWhoseSyncIDIsNoTimestampIsRefused`: kept as this device's version, such a `sync_id`
     *  would become an `If-Match` naming no entity tag, which a client library may drop (review of 2026-12-03). */
    @Test
    fun aSaveAnswerWhoseSyncIdIsNoTimestampIsRefused() {
        for (syncId in listOf("", "v1", "2026-08-12T19:00:00+02:00", "\"2026-08-12T19:00:00.000Z\"")) {
            val lying = object : HttpTransport {
                override suspend fun send(request: HttpRequest): HttpResponse =
                    if (request.url.contains("wallet-backup.ashx")) {
                        HttpResponse(200, emptyMap(), Json.write(Json.obj("ok" to JsonValue.Bool(true), "sync_id" to Json.str(syncId))))
                    } else {
                        server.send(request)
                    }
            }
            val liar = BackupClient("http://fake", SessionTokenProvider("http://fake", { "oidc-ok" }, lying, clock), lying, clock)
            try {
                runSuspending { liar.save(blob) }
                fail<Unit>("the sync_id \"$syncId\" was taken")
            } catch (e: BackupError.Rejected) {
                assertEquals("malformed_save_response", e.code)
            }
        }
    }

    /**
     * A load's `ETag` is read as Swift's `EntityTag.syncID` reads it: a weak tag (`W/"…"`, which a compressing proxy
     * makes of the server's strong one) names its sync id, optional whitespace is dropped, the id is taken in its
     * canonical form; a quoted text that is no RFC 3339 sync id, an unquoted one, or two tags are `missing_etag`.
     * Before, only exactly `"…"` was read: every load through such a proxy failed with `missing_etag`, and `"v1"` was
     * taken as the version (and sent back in `If-Match`).
     */
    /**
     * A 304 answers only a conditional load. To one that named no version (a recovery, a pairing confirmation) a lying
     * server's or a confused cache's 304 was taken as "unchanged", and the engine then failed as LOCAL_STORAGE on a
     * null synced version, blaming this device's storage for the server's answer.
     */
    @Test
    fun aNotModifiedToALoadThatNamedNoVersionIsTheServersFault() {
        val stored = runSuspending { client.save(blob) }
        val liar = object : HttpTransport {
            override suspend fun send(request: HttpRequest): HttpResponse =
                if (request.url.contains("action=load")) HttpResponse(304, emptyMap(), ByteArray(0)) else server.send(request)
        }
        val behind = BackupClient("http://fake", SessionTokenProvider("http://fake", { "oidc-ok" }, liar, clock), liar, clock)
        try {
            runSuspending { behind.load() }
            fail<Unit>("a 304 to an unconditional load was taken")
        } catch (e: BackupError.Rejected) {
            assertEquals(304, e.status)
            assertEquals("unconditional_not_modified", e.code)
        }
        assertNull(runSuspending { behind.load(ifNoneMatch = stored) })
    }

    @Test
    fun aLoadReadsAWeakETagAndRefusesOneThatIsNoSyncId() {
        runSuspending { client.save(blob) }
        val stored = server.current!!.syncId
        fun loadServedWith(etag: String): BackupClient.Snapshot? {
            val proxy = object : HttpTransport {
                override suspend fun send(request: HttpRequest): HttpResponse {
                    val response = server.send(request)
                    if (!request.url.contains("action=load") || response.status != 200) return response
                    return HttpResponse(200, mapOf("ETag" to etag), response.body)
                }
            }
            val behind = BackupClient("http://fake", SessionTokenProvider("http://fake", { "oidc-ok" }, proxy, clock), proxy, clock)
            return runSuspending { behind.load() }
        }
        for (etag in listOf("W/\"$stored\"", " W/\"$stored\"\t", "\"$stored\"")) {
            assertEquals(stored, loadServedWith(etag)!!.syncId, "ETag $etag")
        }
        assertEquals("2026-08-12T19:00:00.000Z", loadServedWith("W/\"2026-08-12T19:00:00+00:00\"")!!.syncId, "a sync id is taken in its canonical form")
        for (etag in listOf("\"v1\"", "W/\"v1\"", "\"\"", stored, "W/$stored", "\"$stored\", \"$stored\"", "\"$stored", "W/")) {
            try {
                val snapshot = loadServedWith(etag)
                fail<Unit>("the ETag $etag was taken as version ${snapshot?.syncId}")
            } catch (e: BackupError.Rejected) {
                assertEquals("missing_etag", e.code, "ETag $etag")
            }
        }
    }

    @Test
    fun retriesAreBoundedAndJittered() {
        runSuspending { client.save(blob) }
        server.failNext = 2
        server.networkErrorsNext = 1
        runSuspending { client.load() }
        assertEquals(3, clock.sleeps.size)
        // Full jitter under a doubling cap: 250, 500, 1000 ms.
        clock.sleeps.forEachIndexed { i, ms -> assertTrue(ms in 0..(250L shl i), "sleep $i was $ms") }
        clock.sleeps.clear()
        server.failNext = 100
        try { runSuspending { client.load() }; fail<Unit>("no error") } catch (e: BackupError.ServerUnavailable) { assertEquals(503, e.status) }
        assertEquals(3, clock.sleeps.size, "four attempts, three waits")
        server.failNext = 0
        assertEquals(128L, RetryPolicy().delayMillis(1, 0.512))
        assertEquals(8_000L, RetryPolicy().delayMillis(12, 1.0))
    }

    @Test
    fun cancellationStopsRetriesAndSleeps() {
        // The cancel comes once the first retry wait has begun, not after a fixed time: with full jitter two waits
        // could both be short, and a starved CI machine could not have sent the first attempt within any fixed time.
        val sleeping = CompletableDeferred<Long>()
        val clock = object : WalletClock {
            override fun nowMillis() = SystemWalletClock.nowMillis()
            override suspend fun sleep(millis: Long) {
                sleeping.complete(millis)
                SystemWalletClock.sleep(600_000) // longer than the test: the jittered wait the policy asks for may be 0
            }
        }
        val real = BackupClient("http://fake", SessionTokenProvider("http://fake", { "oidc-ok" }, server, SystemWalletClock), server, clock,
            RetryPolicy(maxAttempts = 10, baseDelayMillis = 2_000, maxDelayMillis = 2_000))
        runSuspending { real.save(blob) }
        server.failNext = 1000
        val outcome = runBlocking {
            val call = async(Dispatchers.Default) { real.load() }
            withTimeout(10_000) { sleeping.await() }
            call.cancel()
            try { call.await(); "returned" } catch (e: CancellationException) { "cancelled" }
        }
        assertEquals("cancelled", outcome)
        assertEquals(1, server.requests.count { it.url.contains("action=load") }, "one attempt before the first wait")
        Thread.sleep(300)
        assertEquals(1, server.requests.count { it.url.contains("action=load") }, "no attempt after cancellation")
    }

    @Test
    fun realTransportTalksHttp() {
        // A tiny local HTTP server, to run HttpURLConnection itself: headers, body, status, error body.
        val socket = java.net.ServerSocket(0)
        val thread = Thread {
            socket.accept().use { s ->
                val input = s.getInputStream().bufferedReader()
                val lines = generateSequence { input.readLine() }.takeWhile { it.isNotEmpty() }.toList()
                val length = lines.firstOrNull { it.startsWith("Content-Length:", ignoreCase = true) }?.substringAfter(":")?.trim()?.toInt() ?: 0
                val body = CharArray(length).also { input.read(it) }
                val answer = "{\"error\":\"conflict\",\"sync_id\":\"x\",\"echo\":\"${String(body)}\",\"m\":\"${lines.first { it.startsWith("If-Match") }.replace("\"", "\\\"")}\"}"
                s.getOutputStream().write(("HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nContent-Length: ${answer.length}\r\nConnection: close\r\n\r\n$answer").toByteArray())
            }
        }
        thread.start()
        val response = runSuspending { UrlConnectionTransport().send(HttpRequest("POST", "http://127.0.0.1:${socket.localPort}/wallet-backup.ashx?action=save",
            mapOf("If-Match" to "\"a\""), Crypto.utf8("hello"))) }
        thread.join(5000)
        socket.close()
        assertEquals(409, response.status)
        val body = Json.parse(response.body) as JsonValue.Obj
        assertEquals("hello", body["echo"]!!.string)
        assertEquals("If-Match: \"a\"", body["m"]!!.string)
        assertEquals("application/json", response.header("content-type"))
    }

    @Test
    fun cancellingDisconnectsAHungRequest() {
        // A server that accepts and never answers: only cancellation ends the wait (the read timeout is 30 s).
        val socket = java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))
        val accepted = ArrayList<java.net.Socket>()
        val connected = CountDownLatch(1)
        val thread = Thread { try { accepted.add(socket.accept()); connected.countDown() } catch (e: java.io.IOException) {} }
        thread.start()
        val outcome = runBlocking {
            val call = async(Dispatchers.Default) { UrlConnectionTransport().send(HttpRequest("GET", "http://127.0.0.1:${socket.localPort}/x", emptyMap(), null)) }
            // Cancelled once connected (a fixed delay could end before a starved machine connects), then a little later
            // so that the request is most likely being read.
            assertTrue(connected.await(10, TimeUnit.SECONDS), "the request reached the server")
            delay(100)
            call.cancel()
            try { call.await(); "answered" } catch (e: CancellationException) { "cancelled" }
        }
        assertEquals("cancelled", outcome)
        thread.join(5_000)
        // The disconnect reached the socket: the server side reads end-of-stream rather than waiting on an open request.
        val peer = accepted.single()
        peer.soTimeout = 5_000
        val input = peer.getInputStream()
        try { while (input.read() >= 0) Unit } catch (e: java.net.SocketException) { /* reset by the client: gone too */ }
        accepted.forEach { it.close() }
        socket.close()
    }
}
