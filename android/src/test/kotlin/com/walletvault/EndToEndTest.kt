package com.walletvault

import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import java.io.File
import java.nio.file.Files
import java.util.concurrent.TimeUnit
import javax.crypto.spec.SecretKeySpec

/**
 * Cross-platform, end to end: the real `walletvault-server --dev` (started here) and the Swift `walletvault` CLI
 * share vaults with a Kotlin device. Binaries come from $WALLETVAULT_BIN_DIR (set by `make test`) or
 * ../.build/debug; without them the test is skipped, unless WALLETVAULT_BIN_DIR is set (then it fails).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EndToEndTest {
    private val binDir = File(System.getenv("WALLETVAULT_BIN_DIR") ?: "../.build/debug")
    private val work: File = Files.createTempDirectory("wv-e2e").toFile()
    private var server: Process? = null
    private lateinit var baseUrl: String

    @BeforeAll
    fun startServer() {
        val present = File(binDir, "walletvault-server").canExecute() && File(binDir, "walletvault").canExecute()
        if (System.getenv("WALLETVAULT_BIN_DIR") != null && !present) fail<Unit>("no walletvault-server / walletvault in $binDir")
        assumeTrue(present, "Swift binaries not built (swift build); end-to-end test skipped")
        val log = File(work, "server.out")
        val process = ProcessBuilder(File(binDir, "walletvault-server").path, "--dev", "--listen", "127.0.0.1:0",
            "--data-dir", File(work, "server-data").path, "--quiet")
            .redirectOutput(log).redirectError(File(work, "server.err")).start()
        server = process
        val deadline = System.currentTimeMillis() + 30_000
        while (System.currentTimeMillis() < deadline) {
            val line = log.readLines().firstOrNull { it.contains("http://") }
            if (line != null) { baseUrl = line.substring(line.indexOf("http://")).trim().trimEnd('/'); return }
            if (!process.isAlive) break
            Thread.sleep(50)
        }
        fail<Unit>("the server did not start: " + File(work, "server.err").readText())
    }

    @AfterAll
    fun stopServer() {
        server?.destroy()
        server?.waitFor(10, TimeUnit.SECONDS)
        server?.destroyForcibly()
        work.deleteRecursively()
    }

    class Result(val code: Int, val stdout: String, val stderr: String) {
        override fun toString() = "exit $code\n$stdout\n$stderr"
    }

    private fun cli(home: String, vararg arguments: String): Result {
        val out = File(work, "cli.out")
        val err = File(work, "cli.err")
        val builder = ProcessBuilder(listOf(File(binDir, "walletvault").path, "--home", File(work, home).path) + arguments)
            .redirectOutput(out).redirectError(err).redirectInput(ProcessBuilder.Redirect.from(File("/dev/null")))
        builder.environment()["WALLETVAULT_HOME"] = File(work, "nohome").path
        val process = builder.start()
        if (!process.waitFor(120, TimeUnit.SECONDS)) { process.destroyForcibly(); fail<Unit>("walletvault ${arguments.joinToString(" ")} timed out") }
        return Result(process.exitValue(), out.readText(), err.readText())
    }

    private fun cliOk(home: String, vararg arguments: String): Result {
        val result = cli(home, *arguments)
        assertEquals(0, result.code, "walletvault ${arguments.joinToString(" ")}: $result")
        return result
    }

    private fun file(name: String, text: String): String = File(work, name).also { it.writeText(text) }.path

    private fun login(home: String, sub: String, label: String) =
        cliOk(home, "login", "--server", baseUrl, "--dev", "--sub", sub, "--azp", "oem-a", "--label", label)

    private fun recoveryCode(text: String) = Regex("[0-9A-Z]{5}(-[0-9A-Z]{5}){6}").find(text)?.value

    /**
     * A Kotlin device: its own directory, at-rest key and keys, logged in as [sub]: the test's symmetric Keystore keys,
     * or with [sdk] the shipped Android layer's keys on a fake Keystore of that API level.
     */
    inner class KotlinDevice(val sub: String, label: String, var resolution: ConflictResolution = ConflictResolution.KEEP_LOCAL,
                             sdk: Int? = null) {
        val testKeys = TestDeviceKeys()
        private val store = LocalVaultStore(Files.createTempDirectory(work.toPath(), "kotlin").toFile(), SecretKeySpec(Crypto.randomBytes(32), "AES"))
        val keys: DeviceKeyStore = if (sdk == null) testKeys else KeystoreDeviceKeys(FakeKeystore(sdk, strongBox = false), FakePrompt(), store)
        val conflicts = ArrayList<List<String>>()
        private suspend fun decide(context: ConflictContext): ConflictResolution { conflicts.add(context.conflictingItems); return resolution }
        private val transport = UrlConnectionTransport()
        private suspend fun devToken(): String {
            val response = transport.send(HttpRequest("POST", "$baseUrl/dev-oidc/token", mapOf("Content-Type" to "application/x-www-form-urlencoded"),
                Crypto.utf8("sub=$sub&azp=oem-a")))
            return (Json.parse(response.body) as JsonValue.Obj)["access_token"]!!.string!!
        }
        val tokens = SessionTokenProvider(baseUrl, { devToken() })
        /** While set, this device's saves meet the server's hourly cap (a 429, as the server answers past it). */
        @Volatile var savesCapped = false
        private val cappable = object : HttpTransport {
            override suspend fun send(request: HttpRequest): HttpResponse =
                if (savesCapped && request.url.contains("action=save")) {
                    HttpResponse(429, mapOf("Retry-After" to "120", "Content-Type" to "application/json"),
                        Crypto.utf8("{\"error\":\"rate_limited\",\"message\":\"hourly cap\"}"))
                } else transport.send(request)
        }
        val backup = BackupClient(baseUrl, tokens, cappable)
        val engine = VaultSyncEngine(store, backup, keys, label, conflictHandler = this::decide)
        fun sync() = runSuspending { engine.sync() }
        fun set(id: String, value: String) = engine.edit { d, now -> d.set(id, Json.str(value), now) }
        fun value(id: String) = engine.document()?.liveValues?.get(id)?.string
    }

    /** Pairs [device] to the vault of CLI profile [home]: its request, the CLI's approval, the confirmation code. */
    private fun pairWithCli(home: String, device: KotlinDevice) {
        val request = device.engine.pairingRequest()
        val approval = cliOk(home, "pair", "approve", request.encoded, "--sas", request.shortAuthenticationString)
        val confirmation = Regex("Confirmation code for it: (\\d{3} \\d{3})").find(approval.stdout)?.groupValues?.get(1)
            ?: fail("no confirmation code in $approval")
        assertTrue(runSuspending { device.engine.confirmPairing(confirmation) } is SyncReport.Restored)
    }

    private fun expectSync(code: SyncException.Code, block: () -> Unit) {
        try { block() } catch (e: SyncException) { assertEquals(code, e.code, e.message); return }
        fail<Unit>("expected $code")
    }

    @Test
    fun kotlinCreatesAndTheCliPairs() {
        val kotlin = KotlinDevice("alice", "Pixel 8")
        val code = RecoveryCode.generate()
        runSuspending { kotlin.engine.createVault(listOf(Recipient(RecoveryCodeKek(code), "Recovery code"))) }
        kotlin.set("passport", "P-from-kotlin")
        assertTrue(kotlin.sync() is SyncReport.Pushed)

        login("cli-a", "alice", "Laptop")
        assertEquals(4, cli("cli-a", "pull").code, "the CLI has no key in the vault yet")
        val requested = cliOk("cli-a", "pair", "request")
        val line = requested.stdout.lines().first { it.startsWith("wvpair1.") }
        val request = PairingRequest.parse(line)
        assertTrue(requested.stdout.contains(request.shortAuthenticationString), "both sides show the same comparison value: $requested")
        val approved = runSuspending { kotlin.engine.approve(request) }
        // FORMAT.md §11.4: the CLI reads through a public-key entry, so it confirms the vault with the Kotlin code.
        assertEquals(4, cli("cli-a", "pull").code, "not before the confirmation")
        val wrong = String.format(java.util.Locale.ROOT, "%06d", (approved.confirmationCode.replace(" ", "").toInt() + 1) % 1_000_000)
        assertEquals(6, cli("cli-a", "pair", "confirm", wrong).code, "a wrong code is refused")
        cliOk("cli-a", "pair", "confirm", approved.confirmationCode)
        assertEquals(approved.confirmationCode, runSuspending { kotlin.engine.confirmationCode(request) })
        assertEquals("P-from-kotlin", cliOk("cli-a", "pull", "--item", "passport").stdout.trim())
        // The CLI edits; the Kotlin device restores silently.
        cliOk("cli-a", "push", "--item", "licence", file("licence.txt", "L-from-cli"))
        assertTrue(kotlin.sync() is SyncReport.Restored)
        assertEquals("L-from-cli", kotlin.value("licence"))
        val devices = cliOk("cli-a", "devices").stdout
        assertTrue(devices.contains("A256GCMKW") && devices.contains(kotlin.testKeys.kek!!.kekId), devices)
    }

    @Test
    fun theCliCreatesAndKotlinPairsThenEditsConflictsRecoveryRestoreAndRevocation() {
        login("cli-b", "bob", "Laptop B")
        val created = cliOk("cli-b", "init")
        val code = recoveryCode(created.stdout) ?: fail("no recovery code in $created")
        cliOk("cli-b", "push", "--item", "passport", file("p1.txt", "P-1"))

        // Kotlin pairs: its request, the CLI approves with the six digits, the Kotlin device restores and enrolls its Keystore key.
        val kotlin = KotlinDevice("bob", "Pixel 8")
        val request = kotlin.engine.pairingRequest()
        val approval = cliOk("cli-b", "pair", "approve", request.encoded, "--sas", request.shortAuthenticationString)
        val confirmation = Regex("Confirmation code for it: (\\d{3} \\d{3})").find(approval.stdout)?.groupValues?.get(1)
            ?: fail("no confirmation code in $approval")
        expectSync(SyncException.Code.CONFIRMATION_REQUIRED) { kotlin.sync() }
        val wrong = String.format(java.util.Locale.ROOT, "%06d", (confirmation.replace(" ", "").toInt() + 1) % 1_000_000)
        expectSync(SyncException.Code.CONFIRMATION_MISMATCH) { runSuspending { kotlin.engine.confirmPairing(wrong) } }
        assertTrue(runSuspending { kotlin.engine.confirmPairing(confirmation) } is SyncReport.Restored)
        assertEquals("P-1", kotlin.value("passport"))
        val kotlinKek = kotlin.testKeys.kek!!.kekId
        val entries = kotlin.engine.devices()
        assertEquals(setOf("ECDH-ES+A256KW", "A256KW", "A256GCMKW"), entries.map { it.alg }.toSet(), "CLI key, recovery code, Kotlin Keystore key")
        assertEquals(3, entries.size, "the single-use pairing entry is gone")
        assertTrue(cliOk("cli-b", "devices").stdout.contains(kotlinKek))

        // Different items: merged.
        kotlin.set("k-item", "from kotlin")
        cliOk("cli-b", "push", "--item", "c-item", file("c.txt", "from cli"))
        val merged = kotlin.sync()
        assertTrue(merged is SyncReport.Merged && merged.conflicts.isEmpty(), merged.toString())
        assertEquals("from cli", kotlin.value("c-item"))
        assertEquals("from kotlin", cliOk("cli-b", "pull", "--item", "k-item").stdout.trim())

        // The same item, CLI first: the conflict reaches the Kotlin callback; keeping this device's wins and is pushed.
        kotlin.set("shared", "kotlin value")
        cliOk("cli-b", "push", "--item", "shared", file("s1.txt", "cli value"))
        kotlin.resolution = ConflictResolution.KEEP_LOCAL
        kotlin.sync()
        assertEquals(listOf(listOf("shared")), kotlin.conflicts)
        assertEquals("kotlin value", kotlin.value("shared"))
        assertEquals("kotlin value", cliOk("cli-b", "pull", "--item", "shared").stdout.trim())

        // The same item, Kotlin first: the CLI exits 3 and keeps its edit; nothing is overwritten on the server.
        kotlin.set("shared2", "kotlin 2")
        cliOk("cli-b", "pull")
        kotlin.sync()
        val refused = cli("cli-b", "push", "--item", "shared2", file("s2.txt", "cli 2"))
        assertEquals(3, refused.code, refused.toString())
        kotlin.sync()
        assertEquals("kotlin 2", kotlin.value("shared2"))
        val kept = cliOk("cli-b", "sync", "--keep", "local")
        assertNotNull(kept)
        assertTrue(kotlin.sync() is SyncReport.Restored)
        assertEquals("cli 2", kotlin.value("shared2"), "the CLI's edit was kept until it was decided")

        // The Kotlin device restores an old version the CLI wrote.
        cliOk("cli-b", "push", "--item", "doc", file("d1.txt", "old"))
        cliOk("cli-b", "push", "--item", "doc", file("d2.txt", "new"))
        kotlin.sync()
        assertEquals("new", kotlin.value("doc"))
        val versions = runSuspending { kotlin.backup.versions() }
        val old = versions[1].syncId
        assertEquals(old, runSuspending { kotlin.engine.restoreVersion(old) }.restoredFrom)
        assertEquals("old", kotlin.value("doc"))
        assertEquals("old", cliOk("cli-b", "pull", "--item", "doc").stdout.trim(), "the CLI accepts the restored content as a newer version")

        // The Kotlin device's key is invalidated; it recovers with the CLI's recovery code.
        kotlin.testKeys.key!!.invalidate()
        cliOk("cli-b", "push", "--item", "after", file("a.txt", "written while the key was dead"))
        expectSync(SyncException.Code.KEY_INVALIDATED) { kotlin.sync() }
        assertTrue(runSuspending { kotlin.engine.recover(RecoveryCodeKek(RecoveryCode.parse(code))) } is SyncReport.Restored)
        assertEquals("written while the key was dead", kotlin.value("after"))
        val newKek = kotlin.testKeys.kek!!.kekId
        val listed = cliOk("cli-b", "devices").stdout
        assertTrue(listed.contains(newKek) && !listed.contains(kotlinKek), listed)

        // The CLI revokes the Kotlin device: it can no longer open.
        val revoked = cliOk("cli-b", "revoke", newKek.substring(0, 16), "--code-file", file("code.txt", code + "\n"))
        assertFalse(cliOk("cli-b", "devices").stdout.contains(newKek), revoked.toString())
        expectSync(SyncException.Code.REMOVED_FROM_VAULT) { kotlin.sync() }
        cliOk("cli-b", "push", "--item", "after-revoke", file("r.txt", "x"))
        expectSync(SyncException.Code.REMOVED_FROM_VAULT) { kotlin.sync() }
    }

    /**
     * An erasure while this device's saves wait out the hourly cap (Swift's
     * anErasureDuringTheCapsPauseProvesOverTheVersionTheServerHoldsNow): the sync before it loads nothing then, and a
     * proof over the version last synced, which the CLI device has replaced, was refused with the 403 that reads as
     * `REMOVED_FROM_VAULT`. The proof goes over what the real server holds now, and the erasure goes through.
     */
    @Test
    fun anErasureDuringTheCapsPauseProvesOverTheVersionTheServerHoldsNow() {
        login("cli-g", "gina", "Laptop G")
        cliOk("cli-g", "init")
        cliOk("cli-g", "push", "--item", "passport", file("gp.txt", "P-G"))
        val phone = KotlinDevice("gina", "Pixel 9")
        pairWithCli("cli-g", phone)
        phone.set("visa", "V-G")
        phone.savesCapped = true
        assertTrue(phone.sync() is SyncReport.RateLimited)
        phone.savesCapped = false
        cliOk("cli-g", "push", "--item", "licence", file("gl.txt", "L-G"))
        runSuspending { phone.engine.eraseAccount() }
        assertEquals(8, cli("cli-g", "pull", "--item", "passport").code, "the vault is gone from the server (no vault: exit 8)")
    }

    @Test
    fun aRevokeOnEitherSideKeepsEveryRemainingSwiftAndKotlinDevice() {
        login("cli-c", "carol", "Laptop C")
        val oldCode = recoveryCode(cliOk("cli-c", "init").stdout) ?: fail("no recovery code")
        cliOk("cli-c", "push", "--item", "passport", file("cp.txt", "P-C"))
        // Two Android phones (a Keystore agreement key on API 34, a software key sealed under the seed's AES key on 29).
        val phone = KotlinDevice("carol", "Pixel 8", sdk = 34)
        val tablet = KotlinDevice("carol", "Old tablet", sdk = 29)
        pairWithCli("cli-c", phone)
        pairWithCli("cli-c", tablet)
        // A second CLI device, approved by the Kotlin phone, confirmed with the code the phone shows.
        login("cli-d", "carol", "Laptop D")
        val request = cliOk("cli-d", "pair", "request").stdout.lines().first { it.startsWith("wvpair1.") }
        runSuspending { phone.engine.approve(PairingRequest.parse(request)) }
        val confirmation = runSuspending { phone.engine.confirmationCode(PairingRequest.parse(request)) }
        cliOk("cli-d", "pair", "confirm", confirmation)
        assertEquals("P-C", cliOk("cli-d", "pull", "--item", "passport").stdout.trim())

        // The Swift CLI revokes the tablet and issues a new recovery code in the same save.
        val tabletKek = tablet.keys.current()!!.kekId
        val revoked = cliOk("cli-c", "revoke", tabletKek, "--new-recovery-code")
        val newCode = recoveryCode(revoked.stdout) ?: fail("no new recovery code in $revoked")
        cliOk("cli-c", "push", "--item", "visa", file("cv.txt", "V-1"))
        phone.sync()
        assertEquals("V-1", phone.value("visa"), "the other Android phone still opens")
        assertEquals("V-1", cliOk("cli-d", "pull", "--item", "visa").stdout.trim(), "the other Swift device still opens")
        expectSync(SyncException.Code.REMOVED_FROM_VAULT) { tablet.sync() }
        val fresh = KotlinDevice("carol", "New phone", sdk = 31)
        expectSync(SyncException.Code.NO_ACCESS) { runSuspending { fresh.engine.recover(RecoveryCodeKek(RecoveryCode.parse(oldCode))) } }
        assertTrue(runSuspending { fresh.engine.recover(RecoveryCodeKek(RecoveryCode.parse(newCode))) } is SyncReport.Restored)

        // The Kotlin phone revokes the second CLI device: both Swift and Kotlin members still open, D does not.
        phone.sync()
        val dKek = phone.engine.devices().first { it.label == "Laptop D" }.kekId
        assertTrue(runSuspending { phone.engine.revoke(dKek) } is SyncReport.Rotated)
        phone.set("licence", "L-1")
        phone.sync()
        assertEquals("L-1", cliOk("cli-c", "pull", "--item", "licence").stdout.trim())
        fresh.sync()
        assertEquals("L-1", fresh.value("licence"))
        assertEquals(4, cli("cli-d", "pull", "--item", "licence").code, "the revoked CLI device is refused")
        // With the login it still holds, the revoked CLI device can no longer erase the vault (writer proof).
        assertEquals(4, cli("cli-d", "erase", "--yes").code)
        assertEquals("L-1", cliOk("cli-c", "pull", "--item", "licence").stdout.trim())

        // The Kotlin phone replaces the recovery code: the CLI still opens, the code the CLI printed no longer does.
        val rotated = RecoveryCode.generate()
        runSuspending { phone.engine.replaceRecoveryPaths(listOf(Recipient(RecoveryCodeKek(rotated), "Recovery code"))) }
        assertEquals("L-1", cliOk("cli-c", "pull", "--item", "licence").stdout.trim())
        login("cli-e", "carol", "Laptop E")
        assertEquals(4, cli("cli-e", "recover", "--code-file", file("new.txt", newCode + "\n")).code)
        cliOk("cli-e", "recover", "--code-file", file("rotated.txt", rotated.formatted + "\n"))
        assertEquals("L-1", cliOk("cli-e", "pull", "--item", "licence").stdout.trim())
    }
}
