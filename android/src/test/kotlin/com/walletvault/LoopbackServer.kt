package com.walletvault

import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean

/**
 * [fake] served over real HTTP on 127.0.0.1 (a free port), so that [UrlConnectionTransport] runs against it: a held
 * load ([holdLoads]) keeps a socket open without answering, as a stalled server or network does.
 */
class LoopbackServer(val fake: FakeServer = FakeServer()) : java.io.Closeable {
    private val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 16)
    private val release = CountDownLatch(1)
    private val releasedFlag = AtomicBoolean(false)
    /** Counted down when a held load has arrived. */
    val loadHeld = CountDownLatch(1)
    val url: String get() = "http://127.0.0.1:${server.address.port}"
    /** Whether a held load was let go: by [holdMillis] passing or by [close]. */
    val released: Boolean get() = releasedFlag.get()

    init {
        server.executor = Executors.newFixedThreadPool(4) { r -> Thread(r, "loopback-server").also { it.isDaemon = true } }
        server.createContext("/") { exchange ->
            val query = exchange.requestURI.rawQuery?.let { "?$it" } ?: ""
            val headers = exchange.requestHeaders.entries.associate { it.key to it.value.joinToString(", ") }
            val body = exchange.requestBody.readBytes()
            val request = HttpRequest(exchange.requestMethod, "http://fake${exchange.requestURI.rawPath}$query", headers,
                if (exchange.requestMethod == "POST") body else null)
            val response = try { runSuspending { fake.send(request) } } catch (e: java.io.IOException) { null }
            if (response == null) { exchange.close(); return@createContext }
            for (name in listOf("ETag", "Content-Type", "Retry-After")) response.header(name)?.let { exchange.responseHeaders.add(name, it) }
            exchange.sendResponseHeaders(response.status, if (response.body.isEmpty()) -1 else response.body.size.toLong())
            if (response.body.isNotEmpty()) exchange.responseBody.use { it.write(response.body) }
            exchange.close()
        }
        server.start()
    }

    /** Holds every load for [holdMillis] (or until [close]) before answering it. */
    fun holdLoads(holdMillis: Long) {
        fake.beforeLoad = {
            loadHeld.countDown()
            release.await(holdMillis, TimeUnit.MILLISECONDS)
            releasedFlag.set(true)
        }
    }

    override fun close() {
        release.countDown()
        fake.releaseLongPolls()
        server.stop(0)
    }
}
