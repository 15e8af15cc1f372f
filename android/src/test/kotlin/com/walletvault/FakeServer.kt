package com.walletvault

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.withTimeoutOrNull
import java.io.IOException
import java.util.concurrent.atomic.AtomicInteger

/**
 * An in-memory server speaking the README's API table (D1, D2, D3, versions) through [HttpTransport], with knobs
 * for failures: 5xx and network errors, 429, 401, a pause before a save is stored. A long-poll (`action=load&wait=`
 * with the current version as `If-None-Match`) waits, as the real server's does, until a save, an erasure or
 * [releaseLongPolls] (then 304), or its wait passing.
 */
class FakeServer(private val clock: () -> Long = { System.currentTimeMillis() }) : HttpTransport {
    class Stored(val blob: ByteArray, val syncId: String)

    val versions = ArrayList<Stored>()
    val current: Stored? get() = synchronized(this) { versions.lastOrNull() }
    val exchanges = AtomicInteger()
    val saves = AtomicInteger()
    val erasures = AtomicInteger()
    val requests = ArrayList<HttpRequest>()
    @Volatile var failNext = 0
    @Volatile var networkErrorsNext = 0
    /** Saves stored whose answers are then lost (the connection drops on the way back), as many as this says. */
    @Volatile var saveAnswersLostNext = 0
    /** Loads (not the other requests) that fail with a network error before they reach the store, as many as this says. */
    @Volatile var loadErrorsNext = 0
    @Volatile var rateLimitSaves = false
    /** The `Retry-After` of the 429 that [rateLimitSaves] answers. */
    @Volatile var rateLimitRetryAfterSeconds = 120
    @Volatile var unauthorizedNext = 0
    @Volatile var tokenLifetimeSeconds = 600L
    @Volatile var beforeSaveStored: (() -> Unit)? = null
    @Volatile var beforeExchange: (() -> Unit)? = null
    /** Runs before a load is answered, on the thread serving it: a test holds the request here. */
    @Volatile var beforeLoad: (() -> Unit)? = null
    /** Long-polls waiting now, and long-polls answered (a cancelled one is not). */
    val waitingLongPolls = AtomicInteger()
    val answeredLongPolls = AtomicInteger()
    /** Completed (and replaced) whenever the stored blob changes, which wakes the waiting long-polls. */
    private var changed = CompletableDeferred<Unit>()
    /** The name of the thread each request was sent from, in order (for main-safety tests). */
    val requestThreads = ArrayList<String>()
    private var tokenSerial = 0
    private var lastSyncMillis = 0L

    private fun json(status: Int, vararg members: Pair<String, JsonValue>, headers: Map<String, String> = emptyMap()) =
        HttpResponse(status, headers + ("Content-Type" to "application/json"), Json.write(JsonValue.Obj(members.toList())))

    private fun error(status: Int, code: String, vararg extra: Pair<String, JsonValue>, headers: Map<String, String> = emptyMap()) =
        json(status, "error" to Json.str(code), "message" to Json.str(code), *extra, headers = headers)

    override suspend fun send(request: HttpRequest): HttpResponse {
        synchronized(this) { requests.add(request); requestThreads.add(Thread.currentThread().name) }
        // Field names are case-insensitive: LoopbackServer hands them on as com.sun.net.httpserver spells them.
        val headers = java.util.TreeMap<String, String>(String.CASE_INSENSITIVE_ORDER).apply { putAll(request.headers) }
        if (networkErrorsNext > 0) { networkErrorsNext--; throw IOException("connection reset") }
        if (failNext > 0) { failNext--; return error(503, "unavailable") }
        val path = request.url.substringAfter("//").substringAfter("/").substringBefore("?")
        val query = request.url.substringAfter("?", "")
        if (path == "wallet-session-token.ashx") {
            beforeExchange?.invoke()
            exchanges.incrementAndGet()
            if (headers["Authorization"] != "Bearer oidc-ok") return error(401, "invalid_token")
            val token = synchronized(this) { "session-${++tokenSerial}" }
            return json(200, "access_token" to Json.str(token), "token_type" to Json.str("Bearer"), "expires_in" to Json.int(tokenLifetimeSeconds))
        }
        if (path != "wallet-backup.ashx") return error(404, "not_found")
        if (unauthorizedNext > 0) { unauthorizedNext--; return error(401, "invalid_token") }
        if (headers["Authorization"]?.startsWith("Bearer session-") != true) return error(401, "invalid_token")
        val action = query.split("&").firstOrNull { it.startsWith("action=") }?.substringAfter("=")
        return when (action) {
            "load" -> {
                if (loadErrorsNext > 0) { loadErrorsNext--; throw IOException("connection reset") }
                beforeLoad?.invoke()
                val wanted = query.split("&").firstOrNull { it.startsWith("sync_id=") }?.substringAfter("=")?.let { java.net.URLDecoder.decode(it, "UTF-8") }
                val wait = query.split("&").firstOrNull { it.startsWith("wait=") }?.substringAfter("=")
                if (wait != null) {
                    val seconds = wait.toIntOrNull()
                    if (seconds == null || seconds !in 1..60 || wanted != null) return error(400, "invalid_wait")
                    longPoll(headers, seconds)
                }
                val stored = synchronized(this) { if (wanted == null) versions.lastOrNull() else versions.firstOrNull { it.syncId == wanted } }
                    ?: return error(404, "not_found")
                if (wanted == null && headers["If-None-Match"] == "\"${stored.syncId}\"") return HttpResponse(304, mapOf("ETag" to "\"${stored.syncId}\""), ByteArray(0))
                HttpResponse(200, mapOf("ETag" to "\"${stored.syncId}\""), stored.blob)
            }
            "save" -> {
                val body = request.body ?: ByteArray(0)
                if (body.size > 1_048_576) return error(413, "blob_too_large")
                if (rateLimitSaves) return error(429, "rate_limited", headers = mapOf("Retry-After" to "$rateLimitRetryAfterSeconds"))
                try { VaultEnvelope.parse(body) } catch (e: VaultException.InvalidJson) { return error(400, "invalid_json") } catch (e: VaultException) {}
                beforeSaveStored?.invoke()
                synchronized(this) {
                    val stored = versions.lastOrNull()
                    val ifMatch = headers["If-Match"]
                    val ifNoneMatch = headers["If-None-Match"]
                    val conflict = (ifMatch != null && (stored == null || ifMatch != "\"${stored.syncId}\"")) || (ifNoneMatch == "*" && stored != null)
                    if (conflict) return error(409, "conflict", "sync_id" to (stored?.let { Json.str(it.syncId) } ?: JsonValue.Null), "updatedUtc" to JsonValue.Null)
                    lastSyncMillis = maxOf(lastSyncMillis + 1, clock())
                    val id = UtcTime.formatted(lastSyncMillis)
                    versions.add(Stored(body, id))
                    saves.incrementAndGet()
                    announce()
                    if (saveAnswersLostNext > 0) { saveAnswersLostNext--; throw IOException("connection reset after the save was stored") }
                    json(200, "ok" to JsonValue.Bool(true), "sync_id" to Json.str(id), "bytes" to Json.int(body.size.toLong()), headers = mapOf("ETag" to "\"$id\""))
                }
            }
            "versions" -> synchronized(this) {
                json(200, "versions" to JsonValue.Arr(versions.reversed().map { Json.obj("sync_id" to Json.str(it.syncId), "bytes" to Json.int(it.blob.size.toLong()), "updatedUtc" to JsonValue.Null, "hint" to JsonValue.Null) }))
            }
            "delete" -> synchronized(this) {
                if (request.method != "POST") return error(405, "method_not_allowed")
                versions.clear()
                erasures.incrementAndGet()
                announce()
                json(200, "ok" to JsonValue.Bool(true))
            }
            else -> error(400, "invalid_action")
        }
    }

    /** Serves [blob] as the current version (a server replaying or forging). */
    fun replace(blob: ByteArray) = synchronized(this) {
        lastSyncMillis = maxOf(lastSyncMillis + 1, clock())
        versions.add(Stored(blob, UtcTime.formatted(lastSyncMillis)))
        announce()
    }

    /** Answers every waiting long-poll now (304 when nothing changed), as the real server does at a drain. */
    fun releaseLongPolls() = synchronized(this) { announce() }

    /** Wakes the waiting long-polls; called under the lock. */
    private fun announce() {
        changed.complete(Unit)
        changed = CompletableDeferred()
    }

    /**
     * Holds a load with [headers] while its `If-None-Match` names the current version, until a change or [seconds] pass (the
     * server's deadline, which no test waits for); the caller then answers as for any load.
     */
    private suspend fun longPoll(headers: Map<String, String>, seconds: Int) {
        val signal = synchronized(this) {
            val stored = versions.lastOrNull()
            if (stored != null && headers["If-None-Match"] == "\"${stored.syncId}\"") changed else null
        } ?: return
        waitingLongPolls.incrementAndGet()
        try {
            withTimeoutOrNull(seconds * 1000L) { signal.await() }
        } finally {
            waitingLongPolls.decrementAndGet()
        }
        answeredLongPolls.incrementAndGet()
    }
}

/** A test clock: time moves only when told; sleeps are recorded and advance it. */
class FakeClock(var now: Long = 1_790_000_000_000) : WalletClock {
    val sleeps = ArrayList<Long>()
    override fun nowMillis(): Long = synchronized(this) { now }
    override suspend fun sleep(millis: Long) {
        kotlinx.coroutines.yield()
        synchronized(this) { sleeps.add(millis); now += millis }
    }
}

/**
 * Device keys for tests: the seed's §3 AES key ([KeystoreKek], `A256GCMKW`) in a [FakeKeystore], invalidated as the
 * Keystore does (`key.invalidate()`: the next `Cipher.init` fails as `KeyPermanentlyInvalidatedException`).
 */
class TestDeviceKeys : DeviceKeyStore {
    var key: InvalidatableKey? = null
    var kek: KeystoreKek? = null
    val prompt = FakePrompt()
    val prompts: Int get() = prompt.prompts
    override fun current(): KeyEncryptionKey? = kek
    override suspend fun create(): KeyEncryptionKey {
        val fresh = InvalidatableKey(Crypto.randomBytes(32))
        key = fresh
        val keystore = FakeKeystore()
        return KeystoreKek(keystore, keystore.importAes(fresh), KeystoreKek.newKekId(), prompt).also { kek = it }
    }
}
