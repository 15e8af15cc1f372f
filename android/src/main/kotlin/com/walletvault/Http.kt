package com.walletvault

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import java.io.IOException
import java.net.HttpURLConnection
import java.net.URL
import java.util.concurrent.CancellationException
import java.util.concurrent.CompletableFuture
import kotlin.coroutines.coroutineContext
import kotlin.coroutines.resume

/**
 * One request for an [HttpTransport]. [readTimeoutMillis], when set, is how long this request may wait for its answer
 * (a long-poll's answer may come only at the end of its wait); a transport that has a read timeout of its own uses
 * this one instead for the request.
 */
class HttpRequest(val method: String, val url: String, val headers: Map<String, String>, val body: ByteArray?,
                  val readTimeoutMillis: Int? = null)

class HttpResponse(val status: Int, headers: Map<String, String>, val body: ByteArray) {
    private val headers = headers.mapKeys { asciiLower(it.key) }
    fun header(name: String): String? = headers[asciiLower(name)]

    private companion object {
        fun asciiLower(text: String): String {
            val out = StringBuilder(text.length)
            for (c in text) out.append(if (c in 'A'..'Z') c + 32 else c)
            return out.toString()
        }
    }
}

/** What carries requests; [UrlConnectionTransport] by default, replaceable by an app's OkHttp or Ktor adapter. */
interface HttpTransport {
    /** Sends one request. Throws IOException for network failures, CancellationException when cancelled. */
    suspend fun send(request: HttpRequest): HttpResponse
}

/** Time, and waiting, replaceable in tests. */
interface WalletClock {
    fun nowMillis(): Long
    suspend fun sleep(millis: Long)
}

/** The system clock; [sleep] suspends (no thread is blocked) and ends early with CancellationException on cancel. */
object SystemWalletClock : WalletClock {
    override fun nowMillis(): Long = System.currentTimeMillis()

    override suspend fun sleep(millis: Long) = delay(millis)
}

/**
 * `java.net.HttpURLConnection` behind [HttpTransport], main-safe: the blocking exchange runs on [dispatcher]
 * (`Dispatchers.IO` unless given), and cancelling the caller's coroutine (a cancelled job, `withTimeout`) disconnects
 * the connection at once, which ends a read the server holds; the call then throws CancellationException.
 */
class UrlConnectionTransport(
    private val connectTimeoutMillis: Int = 15_000,
    private val readTimeoutMillis: Int = 30_000,
    private val dispatcher: CoroutineDispatcher = Dispatchers.IO
) : HttpTransport {
    override suspend fun send(request: HttpRequest): HttpResponse {
        // openConnection does no I/O: the connection is made by the first write or read, on the dispatcher.
        val connection = URL(request.url).openConnection() as HttpURLConnection
        val outcome = suspendCancellableCoroutine<Any> { continuation ->
            continuation.invokeOnCancellation { connection.disconnect() }
            // Not a child of the caller: on cancellation the caller resumes at once, while the disconnected read
            // ends on its own thread. Its outcome comes back as a value, never resumeWithException: a cancelled
            // continuation ignores a late value, whereas kotlinx 1.0 passes a late exception on to the parent job.
            CoroutineScope(dispatcher).launch {
                val result: Any = try { exchange(connection, request) } catch (e: Throwable) { e } finally { connection.disconnect() }
                continuation.resume(result)
            }
        }
        if (outcome is Throwable) throw outcome
        return outcome as HttpResponse
    }

    private fun exchange(connection: HttpURLConnection, request: HttpRequest): HttpResponse {
        connection.requestMethod = request.method
        connection.connectTimeout = connectTimeoutMillis
        connection.readTimeout = request.readTimeoutMillis ?: readTimeoutMillis
        connection.useCaches = false
        connection.instanceFollowRedirects = false
        for ((name, value) in request.headers) connection.setRequestProperty(name, value)
        val body = request.body
        if (body != null) {
            connection.doOutput = true
            connection.setFixedLengthStreamingMode(body.size)
            connection.outputStream.use { it.write(body) }
        }
        val status = connection.responseCode
        val stream = if (status >= 400) connection.errorStream else connection.inputStream
        val bytes = stream?.use { it.readBytes() } ?: ByteArray(0)
        val headers = HashMap<String, String>()
        for ((name, values) in connection.headerFields) if (name != null && values.isNotEmpty()) headers[name] = values.joinToString(", ")
        return HttpResponse(status, headers, bytes)
    }
}

/** Bounded, fully jittered exponential backoff for network errors and 5xx. */
class RetryPolicy(val maxAttempts: Int = 4, val baseDelayMillis: Long = 250, val maxDelayMillis: Long = 8_000) {
    fun delayMillis(afterAttempt: Int, random: Double): Long {
        val cap = minOf(maxDelayMillis.toDouble(), baseDelayMillis * Math.pow(2.0, minOf(afterAttempt - 1, 30).toDouble()))
        return (cap * random.coerceIn(0.0, 1.0)).toLong()
    }
}

/**
 * Whether the calling coroutine was cancelled: a CancellationException that app code throws of its own accord (a
 * `withTimeout` inside it, a dismissed dialog's coroutine) while its caller is still active is a failure of that code.
 */
internal suspend fun callerIsCancelled(): Boolean = coroutineContext[Job]?.isActive == false

/**
 * Sends with retries: network errors and 5xx are retried up to the policy's bound; cancellation never is (the waits
 * are the clock's cancellable sleeps). Throws [BackupError.ServerUnavailable] or [BackupError.Transport] once the
 * attempts ran out, [BackupError.Transport] at once for a transport failing with anything but an IOException.
 */
class RetryingSender(private val transport: HttpTransport, private val policy: RetryPolicy, private val clock: WalletClock,
                     private val random: () -> Double = { Crypto.random.nextDouble() }) {
    suspend fun send(request: HttpRequest): HttpResponse {
        var attempt = 0
        while (true) {
            attempt++
            yield()
            val failure: BackupError = try {
                val response = transport.send(request)
                if (response.status < 500) return response
                BackupError.ServerUnavailable(response.status)
            } catch (e: CancellationException) {
                // An app's transport that gives up by itself (a `withTimeout` inside it; Ktor 1's request timeout is
                // a CancellationException) while this caller goes on has failed as a network does.
                if (callerIsCancelled()) throw e
                BackupError.Transport(e.javaClass.simpleName, e)
            } catch (e: IOException) {
                BackupError.Transport(e.javaClass.simpleName, e)
            } catch (e: Exception) {
                // An app's transport (an OkHttp or Ktor adapter) failing otherwise: reported, not retried.
                throw BackupError.Transport(e.javaClass.simpleName, e)
            }
            if (attempt >= policy.maxAttempts) throw failure
            clock.sleep(policy.delayMillis(attempt, random()))
        }
    }
}

/** A failed future's cause, carried as a value (see [UrlConnectionTransport.send] for why not as an exception). */
private class FutureFailure(val error: Throwable)

/** Awaits a future without blocking a thread; cancelling the caller stops the wait (not the future). */
internal suspend fun <T> CompletableFuture<T>.awaitValue(): T {
    val outcome = suspendCancellableCoroutine<Any?> { continuation ->
        whenComplete { value, error ->
            continuation.resume(if (error == null) value else FutureFailure(if (error is java.util.concurrent.CompletionException && error.cause != null) error.cause!! else error))
        }
    }
    if (outcome is FutureFailure) throw outcome.error
    @Suppress("UNCHECKED_CAST")
    return outcome as T
}

/**
 * D1 session tokens: one exchange shared by concurrent callers, refreshed in the background once the token is within
 * [refreshMarginSeconds] of expiry (every caller until then, and while that refresh runs, gets the still-valid token at
 * once, as in Swift's `SessionTokenProvider`), and dropped by [invalidate] after a 401 so the next call exchanges again.
 *
 * An OIDC token source that has not answered [accessTokenTimeoutMillis] after it was asked, in real time, is cancelled
 * and the exchange fails with [BackupError.Transport]: every caller waits for the one exchange, so a source that hangs
 * would otherwise hold them all once the token has expired. A source that shows a sign-in prompt needs a timeout
 * longer than the prompt.
 */
class SessionTokenProvider(
    serverUrl: String,
    private val accessToken: suspend () -> String,
    transport: HttpTransport = UrlConnectionTransport(),
    private val clock: WalletClock = SystemWalletClock,
    retryPolicy: RetryPolicy = RetryPolicy(),
    private val refreshMarginSeconds: Long = 90,
    private val accessTokenTimeoutMillis: Long = 60_000
) {
    private class Cached(val token: String, val refreshAt: Long, val expiresAt: Long)

    private val endpoint = serverUrl.trimEnd('/') + "/wallet-session-token.ashx"
    private val sender = RetryingSender(transport, retryPolicy, clock)
    private val lock = Any()
    private var current: Cached? = null
    private var inFlight: CompletableFuture<Cached>? = null
    /**
     * Where exchanges run: in no caller's coroutine (Swift runs each in a Task of its own), so that a caller cancelled
     * during an exchange neither cancels it nor fails the others waiting on it, and a background refresh outlives the
     * caller that started it. A supervisor, so that one exchange's end never touches another; each exchange catches
     * everything it throws, and its job leaves the scope when it completes, so nothing accumulates.
     */
    private val exchanges = CoroutineScope(SupervisorJob() + Dispatchers.IO)
    /** How many D1 exchanges this provider has started, for diagnostics and tests. */
    @Volatile var exchangeCount = 0
        private set

    /**
     * A session token valid now. Inside the refresh margin a refresh starts in the background and this caller gets the
     * still-valid token at once; a failed background refresh leaves that token in use, and the next caller starts
     * another. Only a caller without a valid token (none yet, expired, invalidated after a 401) waits, for the one
     * exchange shared by every such caller. Throws [BackupError]; CancellationException only when this caller is
     * cancelled: its waiting stops, while the shared exchange goes on for the others.
     */
    suspend fun token(): String {
        val now = clock.nowMillis()
        val shared = synchronized(lock) {
            val cached = current
            if (cached != null && now < cached.expiresAt) {
                if (now >= cached.refreshAt && inFlight == null) startExchange()
                return cached.token
            }
            inFlight ?: startExchange()
        }
        return shared.awaitValue().token
    }

    /**
     * Starts the one exchange and records it as [inFlight]; its outcome completes the returned future, and a token
     * it gets becomes [current]. Called under [lock].
     */
    private fun startExchange(): CompletableFuture<Cached> {
        val shared = CompletableFuture<Cached>()
        inFlight = shared
        exchanges.launch {
            val outcome: Any = try {
                exchange()
            } catch (e: CancellationException) {
                // No caller can cancel this coroutine: the token source or the transport gave up by itself (a timeout
                // of its own). Offline, never signed out; and no waiter may take it for its own cancellation.
                BackupError.Transport(e.javaClass.simpleName, e)
            } catch (e: Throwable) {
                e
            }
            synchronized(lock) {
                if (outcome is Cached) current = outcome
                inFlight = null
            }
            // Completed after inFlight is cleared: a waiter that fails with this outcome and asks again starts anew.
            // A failed background refresh that no one waits on is dropped here: the valid token stays in use.
            if (outcome is Cached) shared.complete(outcome) else shared.completeExceptionally(outcome as Throwable)
        }
        return shared
    }

    /** Forgets [token] after the server refused it (a 401), so the next call exchanges anew. */
    fun invalidate(token: String) {
        synchronized(lock) { if (current?.token == token) current = null }
    }

    private suspend fun exchange(): Cached {
        synchronized(lock) { exchangeCount++ }
        // Asked in a coroutine of its own, so that a source blocking its thread still lets the timeout end the wait.
        val source = exchanges.async { accessToken() }
        val oidc = try {
            withTimeoutOrNull(accessTokenTimeoutMillis) { source.await() } ?: run {
                // The exchange ends here, and its waiters with it; a source that ignores the cancellation is left behind.
                source.cancel()
                throw BackupError.Transport("the OIDC token source did not answer within $accessTokenTimeoutMillis ms")
            }
        } catch (e: CancellationException) {
            throw e
        } catch (e: BackupError) {
            throw e
        } catch (e: Exception) {
            // An app's token source that fails for want of a network (AppAuth wraps the IOException) is offline, not
            // signed out: signing the user out for a tunnel would be wrong.
            throw if (generateSequence<Throwable>(e) { it.cause }.take(8).any { it is IOException }) BackupError.Transport(e.javaClass.simpleName, e)
            else BackupError.Unauthorized
        }
        val issuedAt = clock.nowMillis()
        val response = sender.send(HttpRequest("POST", endpoint, mapOf("Authorization" to "Bearer $oidc"), ByteArray(0)))
        when (response.status) {
            200 -> {
                val answer = try { Json.parse(response.body) as? JsonValue.Obj } catch (e: JsonParseError) { null }
                val token = answer?.get("access_token")?.string
                val expiresIn = answer?.get("expires_in")?.long
                if (token == null || expiresIn == null || expiresIn <= 0) throw BackupError.Rejected(200, "malformed_token_response")
                val lifetime = expiresIn * 1000
                val margin = minOf(refreshMarginSeconds * 1000, lifetime / 2)
                return Cached(token, issuedAt + lifetime - margin, issuedAt + lifetime)
            }
            401 -> throw BackupError.Unauthorized
            // A limiter in front of D1 (this server has none): wait as for the save cap, not "sign in again".
            429 -> throw rateLimited(response)
            else -> throw BackupError.Rejected(response.status, errorCode(response.body))
        }
    }
}

/** The 429 [response], with its `Retry-After` in seconds (60 when it names none). */
internal fun rateLimited(response: HttpResponse) = BackupError.RateLimited(response.header("Retry-After")?.trim()?.toIntOrNull() ?: 60)

internal fun errorBody(body: ByteArray): JsonValue.Obj? = try { Json.parse(body) as? JsonValue.Obj } catch (e: JsonParseError) { null }
internal fun errorCode(body: ByteArray): String = errorBody(body)?.get("error")?.string ?: ""

/** D2 (save), D3 (load), versions: the backup endpoint with the session token, retries and preconditions. */
class BackupClient(
    serverUrl: String,
    private val tokens: SessionTokenProvider,
    transport: HttpTransport = UrlConnectionTransport(),
    clock: WalletClock = SystemWalletClock,
    retryPolicy: RetryPolicy = RetryPolicy(),
    /** The server's `limits.max_blob_bytes`: larger blobs are refused here without a request (413 preflight). */
    val maxBlobBytes: Int = 1_048_576
) {
    sealed class Precondition {
        object None : Precondition()
        class IfMatch(val syncId: String) : Precondition()
        object IfNoneStored : Precondition()
    }

    class Snapshot(val blob: ByteArray, val syncId: String)
    class Version(val syncId: String, val bytes: Long, val updatedUtc: String?, val hint: String?)

    private val endpoint = serverUrl.trimEnd('/') + "/wallet-backup.ashx"
    private val sender = RetryingSender(transport, retryPolicy, clock)

    /**
     * Saves; returns the new `sync_id`. The save names [next]'s write key and, over an [Precondition.IfMatch] version,
     * proves with [basis]'s (the secrets of the version it replaces) that this device may replace it (FORMAT.md §11.8).
     */
    suspend fun save(blob: ByteArray, precondition: Precondition = Precondition.None, basis: VaultSecrets? = null,
                     next: VaultSecrets? = null): String {
        if (blob.size > maxBlobBytes) throw BackupError.BlobTooLarge(blob.size, maxBlobBytes)
        val headers = hashMapOf("Content-Type" to "application/json")
        when (precondition) {
            is Precondition.IfMatch -> headers["If-Match"] = "\"${precondition.syncId}\""
            is Precondition.IfNoneStored -> headers["If-None-Match"] = "*"
            else -> Unit
        }
        headers.putAll(WriteProof.headers("save", basis, next, (precondition as? Precondition.IfMatch)?.syncId, blob))
        val response = send("POST", "save", headers, blob)
        if (response.status != 200) throw error(response)
        // Kept as this device's version, a sync_id that is no timestamp would go out as an If-Match naming no entity
        // tag, which a client library may drop as empty: the next save would then be unconditional.
        return errorBody(response.body)?.get("sync_id")?.string?.takeIf { UtcTime.parse(it) != null }
            ?: throw BackupError.Rejected(200, "malformed_save_response")
    }

    /**
     * Loads the current blob, or null (304) when it is still [ifNoneMatch]; [syncId] loads a kept older version. With
     * [waitSeconds] (up to the server's `limits.max_wait_seconds`, 60 by default) and [ifNoneMatch], the server holds
     * the request until the blob changes or the time passes (a long-poll), so null then means nothing changed for that
     * long. Throws [BackupError]: [BackupError.NotFound] when nothing is stored, [BackupError.RateLimited] when the
     * server holds as many long-polls as it allows, `Rejected` 400 `invalid_wait` for a wait past its maximum.
     */
    suspend fun load(ifNoneMatch: String? = null, syncId: String? = null, waitSeconds: Int = 0): Snapshot? {
        val headers = HashMap<String, String>()
        if (ifNoneMatch != null) headers["If-None-Match"] = "\"$ifNoneMatch\""
        val waits = waitSeconds > 0 && ifNoneMatch != null && syncId == null
        val query = (syncId?.let { "&sync_id=" + java.net.URLEncoder.encode(it, "UTF-8") } ?: "") + (if (waits) "&wait=$waitSeconds" else "")
        // The answer may come only at the end of the wait: the request must not time out before it.
        val response = send("GET", "load", headers, null, query, if (waits) (waitSeconds + 15) * 1000 else null)
        return when (response.status) {
            200 -> {
                // Read as Swift reads it (EntityTag): a weak tag is the strong one, a tag that is no sync id is none.
                val served = response.header("ETag")?.let { EntityTag.syncId(it) } ?: throw BackupError.Rejected(200, "missing_etag")
                // A kept version asked for by name must be that one (as the Swift client checks), not the newest.
                if (syncId != null && UtcTime.parse(served).let { it == null || it != UtcTime.parse(syncId) }) throw BackupError.Rejected(200, "wrong_version")
                Snapshot(response.body, served)
            }
            // A 304 answers only a conditional load: to one that named no version it is the server's fault, not a sign
            // that this device's copy (which it may not have) is current.
            304 -> if (ifNoneMatch != null) null else throw BackupError.Rejected(304, "unconditional_not_modified")
            else -> throw error(response)
        }
    }

    /** The kept versions, newest first. */
    suspend fun versions(): List<Version> {
        val response = send("GET", "versions", emptyMap(), null)
        if (response.status != 200) throw error(response)
        val list = errorBody(response.body)?.get("versions") as? JsonValue.Arr ?: throw BackupError.Rejected(200, "malformed_versions_response")
        return list.elements.mapNotNull { it as? JsonValue.Obj }.mapNotNull { v ->
            val id = v["sync_id"]?.string ?: return@mapNotNull null
            Version(id, v["bytes"]?.long ?: 0, v["updatedUtc"]?.string, v["hint"]?.string)
        }
    }

    /**
     * Erases the stored blob and every kept version (right to erasure); succeeds when nothing was stored too.
     * Throws [BackupError] for a refused or failed request.
     */
    suspend fun erase(basis: VaultSecrets? = null, storedSyncId: String? = null) {
        val response = send("POST", "delete", WriteProof.headers("delete", basis, null, storedSyncId, ByteArray(0)), ByteArray(0))
        if (response.status != 200) throw error(response)
    }

    private suspend fun send(method: String, action: String, headers: Map<String, String>, body: ByteArray?, query: String = "",
                             readTimeoutMillis: Int? = null): HttpResponse {
        for (attempt in 1..2) {
            val token = tokens.token()
            val response = sender.send(HttpRequest(method, "$endpoint?action=$action$query", headers + ("Authorization" to "Bearer $token"), body,
                readTimeoutMillis))
            if (response.status != 401) return response
            // Revoked or expired early: renew once, then give up.
            tokens.invalidate(token)
        }
        throw BackupError.Unauthorized
    }

    private fun error(response: HttpResponse): BackupError {
        val body = errorBody(response.body)
        val code = body?.get("error")?.string ?: ""
        return when {
            response.status == 400 && code == "invalid_json" -> BackupError.InvalidJson
            response.status == 400 && code == "invalid_vault_shape" -> BackupError.InvalidVaultShape(body?.get("detail")?.string ?: "")
            response.status == 413 -> BackupError.BlobTooLarge(null, null)
            response.status == 429 -> rateLimited(response)
            response.status == 404 && code == "not_found" -> BackupError.NotFound
            response.status == 403 && code == "write_proof_required" -> BackupError.WriterRefused
            response.status == 409 -> BackupError.Conflict(body?.get("sync_id")?.string, body?.get("updatedUtc")?.string)
            response.status == 401 -> BackupError.Unauthorized
            else -> BackupError.Rejected(response.status, code)
        }
    }
}
