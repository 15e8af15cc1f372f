package com.walletvault

import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.IOException
import java.net.UnknownHostException
import java.util.concurrent.CancellationException
import javax.crypto.Cipher

/**
 * Issue 27 point 9: no raw exception leaves a public call. Every failure point an app supplies or the platform owns
 * (the transport, the OIDC token source, the device key store, the Keystore authenticator, the conflict handler, an
 * edit) is made to throw each of a set of exceptions, and every public call of the engine must then end normally or
 * with a SyncException; BackupClient and SessionTokenProvider calls with a BackupError.
 */
class NoRawExceptionTest {
    private enum class Point { TRANSPORT, TOKEN_SOURCE, KEY_STORE, AUTHENTICATOR, CONFLICT_HANDLER, EDIT }

    private val failures: List<() -> Exception> = listOf({ RuntimeException("boom") }, { IOException("reset") },
        { UnknownHostException("server.example") }, { IllegalStateException("state") }, { SecurityException("denied") },
        // App code giving up of its own accord while its caller goes on (a `withTimeout` inside it, Ktor 1's timeout).
        { CancellationException("gave up") })

    /** The failure points, armed one at a time. */
    private class Faults {
        @Volatile var point: Point? = null
        @Volatile var failure: (() -> Exception)? = null
        fun fireAt(here: Point) { if (point == here) failure?.let { throw it() } }
    }

    private class FaultyTransport(private val inner: HttpTransport, private val faults: Faults) : HttpTransport {
        override suspend fun send(request: HttpRequest): HttpResponse { faults.fireAt(Point.TRANSPORT); return inner.send(request) }
    }

    private class FaultyKeys(private val faults: Faults) : DeviceKeyStore {
        private var kek: KeystoreKek? = null
        override fun current(): KeyEncryptionKey? { faults.fireAt(Point.KEY_STORE); return kek }
        override suspend fun create(): KeyEncryptionKey {
            faults.fireAt(Point.KEY_STORE)
            val keystore = FakeKeystore()
            val prompt = FakePrompt { cipher ->
                faults.fireAt(Point.AUTHENTICATOR)
                cipher
            }
            return KeystoreKek(keystore, keystore.importAes(InvalidatableKey(Crypto.randomBytes(32))), KeystoreKek.newKekId(), prompt)
                .also { kek = it }
        }
    }

    /** A vault with a recovery code, two versions, and a conflicting edit waiting on [phone]. */
    private class Fixture {
        val faults = Faults()
        val clock = FakeClock()
        val server = FakeServer()
        val transport = FaultyTransport(server, faults)
        val keys = FaultyKeys(faults)
        val code = RecoveryCode.generate()
        val phone = TestProfile(clock, transport, keys, handler = { _ -> faults.fireAt(Point.CONFLICT_HANDLER); ConflictResolution.MERGE },
            accessToken = { faults.fireAt(Point.TOKEN_SOURCE); "oidc-ok" })
        val tablet = TestProfile(clock, server, keys)
        val firstVersion: String
        val deviceKekId: String

        init {
            runSuspending { phone.engine.createVault(listOf(Recipient(RecoveryCodeKek(code), "Recovery code"))) }
            firstVersion = server.current!!.syncId
            deviceKekId = keys.current()!!.kekId
            phone.set("passport", "P-1")
            phone.sync()
            tablet.sync()
            tablet.set("passport", "from the tablet")
            tablet.sync()
            phone.set("passport", "from the phone")
        }

        fun arm(point: Point, failure: () -> Exception) {
            faults.point = point
            faults.failure = failure
            // The session token is cached: let it expire so the token source is asked again.
            if (point == Point.TOKEN_SOURCE) clock.now += 3_600_000
        }
    }

    /** A call under its name (a helper, so that Kotlin 1.3 types the lambda as a suspend function). */
    private fun named(name: String, call: suspend (Fixture) -> Any?) = Pair(name, call)

    private val calls: List<Pair<String, suspend (Fixture) -> Any?>> = listOf(
        named("document") { f -> f.phone.engine.document() },
        named("status") { f -> f.phone.engine.status() },
        named("edit") { f -> f.phone.engine.edit { d, now -> f.faults.fireAt(Point.EDIT); d.set("licence", Json.str("L"), now) } },
        named("devices") { f -> f.phone.engine.devices() },
        named("keyHealth") { f -> f.phone.engine.keyHealth() },
        named("anchor") { f -> f.phone.engine.anchor() },
        named("fingerprint") { f -> f.phone.engine.fingerprint() },
        named("pairingRequest") { f -> f.phone.engine.pairingRequest() },
        named("sync") { f -> f.phone.engine.sync() },
        named("createVault") { f -> f.phone.engine.createVault() },
        named("history") { f -> f.phone.engine.history() },
        named("confirmationCode") { f -> f.phone.engine.confirmationCode(f.deviceKekId) },
        named("approve") { f -> f.phone.engine.approve(PairingRequest(DeviceKek.generate().publicKey, "new phone")) },
        named("confirmPairing") { f -> f.phone.engine.confirmPairing("123 456") },
        named("restoreVersion") { f -> f.phone.engine.restoreVersion(f.firstVersion) },
        named("recover(code)") { f -> f.phone.engine.recover(RecoveryCodeKek(f.code)) },
        named("recover(passphrase)") { f -> f.phone.engine.recover("no such passphrase") },
        named("replaceRecoveryPaths") { f -> f.phone.engine.replaceRecoveryPaths(listOf(Recipient(RecoveryCodeKek(RecoveryCode.generate()), "New code"))) },
        named("revoke") { f -> f.phone.engine.revoke("no-such-entry") },
        named("eraseAccount") { f -> f.phone.engine.eraseAccount() }
    )

    private val clientCalls: List<Pair<String, suspend (Fixture) -> Any?>> = listOf(
        named("token") { f -> SessionTokenProvider("http://fake", { f.faults.fireAt(Point.TOKEN_SOURCE); "oidc-ok" }, f.transport, f.clock).token() },
        named("load") { f -> f.phone.backup.load() },
        named("versions") { f -> f.phone.backup.versions() },
        named("save") { f -> f.phone.backup.save(f.server.current!!.blob) },
        named("erase") { f -> f.phone.backup.erase() }
    )

    /** Runs [call]; returns a description of what escaped when it is not an [allowed] failure, else null. */
    private fun escaped(call: suspend (Fixture) -> Any?, fixture: Fixture, allowed: (Exception) -> Boolean): String? = try {
        runSuspending { call(fixture) }
        null
    } catch (e: CancellationException) {
        "CancellationException without a cancellation"
    } catch (e: Exception) {
        if (allowed(e)) null else "${e.javaClass.name}: ${e.message}"
    }

    @Test
    fun everyEngineCallFailsOnlyWithASyncException() {
        val escapes = ArrayList<String>()
        var failed = 0
        for (point in Point.values()) for (failure in failures) {
            val fixture = Fixture()
            fixture.arm(point, failure)
            for ((name, call) in calls) {
                val escape = escaped(call, fixture) { it is SyncException }
                if (escape != null) escapes.add("$name with $point throwing ${failure().javaClass.simpleName}: $escape")
                failed++
            }
        }
        assertTrue(escapes.isEmpty(), "${escapes.size} raw exceptions escaped:\n" + escapes.joinToString("\n"))
        assertTrue(failed == Point.values().size * failures.size * calls.size)
    }

    @Test
    fun everyClientCallFailsOnlyWithABackupError() {
        val escapes = ArrayList<String>()
        for (point in listOf(Point.TRANSPORT, Point.TOKEN_SOURCE)) for (failure in failures) {
            val fixture = Fixture()
            fixture.arm(point, failure)
            for ((name, call) in clientCalls) {
                val escape = escaped(call, fixture) { it is BackupError }
                if (escape != null) escapes.add("$name with $point throwing ${failure().javaClass.simpleName}: $escape")
            }
        }
        assertTrue(escapes.isEmpty(), "${escapes.size} raw exceptions escaped:\n" + escapes.joinToString("\n"))
    }

    @Test
    fun theArmedFailuresReallyFire() {
        // Each point is reached by the calls above, or the fuzzing would prove nothing: one call per point must fail.
        for ((point, call) in listOf(Point.TRANSPORT to "history", Point.TOKEN_SOURCE to "history", Point.KEY_STORE to "devices",
            Point.AUTHENTICATOR to "sync", Point.CONFLICT_HANDLER to "sync", Point.EDIT to "edit")) {
            val fixture = Fixture()
            fixture.arm(point) { RuntimeException("armed") }
            val failure = try { runSuspending { calls.toMap().getValue(call)(fixture) }; null } catch (e: SyncException) { e }
            assertTrue(failure != null, "$call did not fail with $point armed")
        }
    }
}
