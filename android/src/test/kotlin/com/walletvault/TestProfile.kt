package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.fail
import java.io.File
import java.nio.file.Files
import javax.crypto.spec.SecretKeySpec

/**
 * One profile of a device (a store of its own) talking to [transport] at [url], for engine tests. Profiles given the
 * same [keys] share one device key, so they open each other's versions without pairing.
 */
class TestProfile(
    val clock: FakeClock,
    transport: HttpTransport,
    val keys: DeviceKeyStore = TestDeviceKeys(),
    handler: (suspend (ConflictContext) -> ConflictResolution)? = null,
    url: String = "http://fake",
    accessToken: suspend () -> String = { "oidc-ok" },
    retryPolicy: RetryPolicy = RetryPolicy()
) {
    val directory: File = Files.createTempDirectory("wv-profile").toFile()
    val backup = BackupClient(url, SessionTokenProvider(url, accessToken, transport, clock), transport, clock, retryPolicy)
    /** The profile's files, which a test may plant something in. */
    val store = LocalVaultStore(directory, SecretKeySpec(Crypto.randomBytes(32), "AES"))
    val engine = VaultSyncEngine(store, backup, keys, "phone", conflictHandler = handler, clock = clock)

    fun set(id: String, value: String) { clock.now += 1000; engine.edit { d, now -> d.set(id, Json.str(value), now) } }
    fun value(id: String): String? = engine.document()?.liveValues?.get(id)?.string
    fun sync(): SyncReport = runSuspending { engine.sync() }
}

/** Runs [block], which must fail with a [SyncException] of [code]; returns it. */
fun expectSyncFailure(code: SyncException.Code, block: () -> Unit): SyncException {
    try { block() } catch (e: SyncException) { assertEquals(code, e.code, e.message); return e }
    fail<Unit>("expected $code")
    throw AssertionError()
}
