package com.walletvault

import java.io.IOException
import java.net.HttpURLConnection
import java.net.URL
import java.util.concurrent.CancellationException
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.Executors
import java.util.concurrent.ThreadFactory
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.coroutineContext
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.coroutines.suspendCoroutine

class HttpRequest(val method: String, val url: String, val headers: Map<String, String>, val body: ByteArray?)

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

/**
 * Cancellation without kotlinx-coroutines: put a [Cancellation] in the coroutine context (`withContext` or
 * `startCoroutine(Continuation(cancellation) …)`); [Cancellation.cancel] stops retries and sleeps and disconnects
 * an open connection. Any `java.util.concurrent.CancellationException` (which is what kotlinx's
 * `CancellationException` is on the JVM) thrown by a transport or a clock is passed through, never retried.
 */
class Cancellation : AbstractCoroutineContextElement(Key) {
    companion object Key : CoroutineContext.Key<Cancellation>

    private val cancelled = AtomicBoolean(false)
    private val listeners = CopyOnWriteArrayList<() -> Unit>()

    val isCancelled: Boolean get() = cancelled.get()

    fun cancel() {
        if (cancelled.compareAndSet(false, true)) listeners.forEach { runCatching(it) }
    }

    /** Runs [listener] on cancellation (at once if already cancelled); returns a function that unregisters it. */
    fun onCancel(listener: () -> Unit): () -> Unit {
        listeners.add(listener)
        if (cancelled.get()) runCatching(listener)
        return { listeners.remove(listener) }
    }

    fun throwIfCancelled() {
        if (cancelled.get()) throw CancellationException("cancelled")
    }
}

/** Throws CancellationException if the current coroutine's [Cancellation] was cancelled. */
suspend fun checkCancelled() {
    coroutineContext[Cancellation]?.throwIfCancelled()
}

/** Time, and waiting, replaceable in tests. */
interface WalletClock {
    fun nowMillis(): Long
    suspend fun sleep(millis: Long)
}

/** The system clock; [sleep] suspends (no thread is blocked) and ends early with CancellationException on cancel. */
object SystemWalletClock : WalletClock {
    private val timer = Executors.newSingleThreadScheduledExecutor(ThreadFactory { r -> Thread(r, "walletvault-timer").also { it.isDaemon = true } })

    override fun nowMillis(): Long = System.currentTimeMillis()

    override suspend fun sleep(millis: Long) {
        val cancellation = coroutineContext[Cancellation]
        cancellation?.throwIfCancelled()
        suspendCoroutine<Unit> { continuation ->
            val done = AtomicBoolean(false)
            var unregister: (() -> Unit)? = null
            val task = timer.schedule({ if (done.compareAndSet(false, true)) { unregister?.invoke(); continuation.resume(Unit) } }, millis, TimeUnit.MILLISECONDS)
            unregister = cancellation?.onCancel {
                if (done.compareAndSet(false, true)) { task.cancel(false); continuation.resumeWithException(CancellationException("cancelled")) }
            }
        }
    }
}

/**
 * `java.net.HttpURLConnection` behind [HttpTransport]. The call blocks the calling thread while the request runs:
 * call the library from a background thread (on Android, not the main thread; with coroutines, `Dispatchers.IO`).
 */
class UrlConnectionTransport(private val connectTimeoutMillis: Int = 15_000, private val readTimeoutMillis: Int = 30_000) : HttpTransport {
    override suspend fun send(request: HttpRequest): HttpResponse {
        val cancellation = coroutineContext[Cancellation]
        cancellation?.throwIfCancelled()
        val connection = URL(request.url).openConnection() as HttpURLConnection
        val unregister = cancellation?.onCancel { connection.disconnect() }
        try {
            connection.requestMethod = request.method
            connection.connectTimeout = connectTimeoutMillis
            connection.readTimeout = readTimeoutMillis
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
        } catch (e: IOException) {
            if (cancellation?.isCancelled == true) throw CancellationException("cancelled")
            throw e
        } finally {
            unregister?.invoke()
            connection.disconnect()
        }
    }
}

/** Why a call to the server failed (the Swift SDK's `BackupError`). */
sealed class BackupError(message: String) : Exception(message) {
    object InvalidJson : BackupError("the server refused the blob as invalid JSON")
    class InvalidVaultShape(val detail: String) : BackupError("the server refused the blob's shape: $detail")
    class BlobTooLarge(val bytes: Int?, val limit: Int?) : BackupError("the blob is too large" + (if (bytes != null) " ($bytes bytes, limit $limit)" else ""))
    class RateLimited(val retryAfterSeconds: Int) : BackupError("rate limited; retry after $retryAfterSeconds s")
    object NotFound : BackupError("nothing is stored")
    /** 403 `write_proof_required`: the stored version names a write key and this request proved none by it (§11.8). */
    object WriterRefused : BackupError("the server takes saves and erasures of this vault only from its current members")
    class Conflict(val currentSyncId: String?, val currentUpdatedUtc: String?) : BackupError("another version was saved first ($currentSyncId)")
    object Unauthorized : BackupError("the server refused the token")
    class Rejected(val status: Int, val code: String) : BackupError("the server answered $status $code")
    class ServerUnavailable(val status: Int) : BackupError("the server answered $status")
    class Transport(val reason: String) : BackupError("network failure: $reason")
}

/** Bounded, fully jittered exponential backoff for network errors and 5xx. */
class RetryPolicy(val maxAttempts: Int = 4, val baseDelayMillis: Long = 250, val maxDelayMillis: Long = 8_000) {
    fun delayMillis(afterAttempt: Int, random: Double): Long {
        val cap = minOf(maxDelayMillis.toDouble(), baseDelayMillis * Math.pow(2.0, minOf(afterAttempt - 1, 30).toDouble()))
        return (cap * random.coerceIn(0.0, 1.0)).toLong()
    }
}

/** Sends with retries: network errors and 5xx are retried up to the policy's bound; cancellation never is. */
class RetryingSender(private val transport: HttpTransport, private val policy: RetryPolicy, private val clock: WalletClock,
                     private val random: () -> Double = { Crypto.random.nextDouble() }) {
    suspend fun send(request: HttpRequest): HttpResponse {
        var attempt = 0
        while (true) {
            attempt++
            checkCancelled()
            val failure: BackupError = try {
                val response = transport.send(request)
                if (response.status < 500) return response
                BackupError.ServerUnavailable(response.status)
            } catch (e: CancellationException) {
                throw e
            } catch (e: IOException) {
                BackupError.Transport(e.javaClass.simpleName)
            }
            if (attempt >= policy.maxAttempts) throw failure
            clock.sleep(policy.delayMillis(attempt, random()))
        }
    }
}

/** Awaits a future without blocking a thread. */
internal suspend fun <T> CompletableFuture<T>.awaitValue(): T = suspendCoroutine { continuation ->
    whenComplete { value, error ->
        if (error != null) continuation.resumeWithException(if (error is java.util.concurrent.CompletionException && error.cause != null) error.cause!! else error)
        else continuation.resume(value)
    }
}

/**
 * D1 session tokens: one exchange shared by concurrent callers, refreshed once the token is within
 * [refreshMarginSeconds] of expiry (callers arriving during that refresh keep using the still-valid token),
 * and dropped by [invalidate] after a 401 so the next call exchanges again.
 */
class SessionTokenProvider(
    serverUrl: String,
    private val accessToken: suspend () -> String,
    transport: HttpTransport = UrlConnectionTransport(),
    private val clock: WalletClock = SystemWalletClock,
    retryPolicy: RetryPolicy = RetryPolicy(),
    private val refreshMarginSeconds: Long = 90
) {
    private class Cached(val token: String, val refreshAt: Long, val expiresAt: Long)

    private val endpoint = serverUrl.trimEnd('/') + "/wallet-session-token.ashx"
    private val sender = RetryingSender(transport, retryPolicy, clock)
    private val lock = Any()
    private var current: Cached? = null
    private var inFlight: CompletableFuture<Cached>? = null
    @Volatile var exchangeCount = 0
        private set

    suspend fun token(): String {
        val now = clock.nowMillis()
        var future: CompletableFuture<Cached>? = null
        var leader = false
        synchronized(lock) {
            val cached = current
            if (cached != null && now < cached.expiresAt && (now < cached.refreshAt || inFlight != null)) return cached.token
            future = inFlight
            if (future == null) {
                future = CompletableFuture()
                inFlight = future
                leader = true
            }
        }
        val shared = future!!
        if (leader) {
            try {
                val fresh = exchange()
                synchronized(lock) { current = fresh; inFlight = null }
                shared.complete(fresh)
            } catch (e: Throwable) {
                synchronized(lock) { inFlight = null }
                shared.completeExceptionally(e)
                // A failed early refresh leaves a still-valid token usable.
                val cached = synchronized(lock) { current }
                if (cached != null && clock.nowMillis() < cached.expiresAt && e !is CancellationException) return cached.token
                throw e
            }
        }
        return shared.awaitValue().token
    }

    fun invalidate(token: String) {
        synchronized(lock) { if (current?.token == token) current = null }
    }

    private suspend fun exchange(): Cached {
        synchronized(lock) { exchangeCount++ }
        val oidc = try { accessToken() } catch (e: CancellationException) { throw e } catch (e: Exception) { throw BackupError.Unauthorized }
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
            else -> throw BackupError.Rejected(response.status, errorCode(response.body))
        }
    }
}

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
        return errorBody(response.body)?.get("sync_id")?.string ?: throw BackupError.Rejected(200, "malformed_save_response")
    }

    /** Loads the current blob, or null (304) when it is still [ifNoneMatch]; [syncId] loads a kept older version. */
    suspend fun load(ifNoneMatch: String? = null, syncId: String? = null): Snapshot? {
        val headers = HashMap<String, String>()
        if (ifNoneMatch != null) headers["If-None-Match"] = "\"$ifNoneMatch\""
        val response = send("GET", "load", headers, null, syncId?.let { "&sync_id=" + java.net.URLEncoder.encode(it, "UTF-8") } ?: "")
        return when (response.status) {
            200 -> {
                val etag = response.header("ETag")
                if (etag == null || etag.length < 2 || !etag.startsWith("\"") || !etag.endsWith("\"")) throw BackupError.Rejected(200, "missing_etag")
                Snapshot(response.body, etag.substring(1, etag.length - 1))
            }
            304 -> null
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

    private suspend fun send(method: String, action: String, headers: Map<String, String>, body: ByteArray?, query: String = ""): HttpResponse {
        for (attempt in 1..2) {
            val token = tokens.token()
            val response = sender.send(HttpRequest(method, "$endpoint?action=$action$query", headers + ("Authorization" to "Bearer $token"), body))
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
            response.status == 429 -> BackupError.RateLimited(response.header("Retry-After")?.trim()?.toIntOrNull() ?: 60)
            response.status == 404 && code == "not_found" -> BackupError.NotFound
            response.status == 403 && code == "write_proof_required" -> BackupError.WriterRefused
            response.status == 409 -> BackupError.Conflict(body?.get("sync_id")?.string, body?.get("updatedUtc")?.string)
            response.status == 401 -> BackupError.Unauthorized
            else -> BackupError.Rejected(response.status, code)
        }
    }
}
