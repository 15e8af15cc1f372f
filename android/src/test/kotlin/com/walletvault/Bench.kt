package com.walletvault

import java.lang.management.ManagementFactory
import java.lang.management.MemoryType
import javax.crypto.Cipher
import javax.crypto.spec.GCMParameterSpec
import javax.crypto.spec.SecretKeySpec

/**
 * `android/build.sh bench [rounds]`: the two benchmark rows of issue 16, printed as markdown table rows.
 * Not a test. Seal/open of a 1 MiB vault beside the same JVM's raw AES-256-GCM on 1 MiB (paired medians), and
 * Argon2id at the format's default costs with the peak heap it took.
 */
fun main(args: Array<String>) {
    val mode = args.getOrNull(1) ?: "all"
    val rounds = args.getOrNull(2)?.toIntOrNull() ?: 15
    if (mode == "all" || mode == "seal") sealOpenRow(rounds)
    if (mode == "all" || mode == "argon2") argon2Row(args.getOrNull(3)?.toIntOrNull() ?: 7)
    if (mode == "argon2-once") {
        // Run by Argon2HeapTest in a JVM whose heap is capped: the derivation must fit.
        val out = Argon2id.derive(Crypto.utf8("pw"), ByteArray(16), Argon2Costs.DEFAULT)
        println("ok ${out.size}")
    }
}

private fun median(values: List<Double>): Double {
    val sorted = values.sorted()
    val n = sorted.size
    return if (n % 2 == 1) sorted[n / 2] else (sorted[n / 2 - 1] + sorted[n / 2]) / 2
}

private fun timeMs(block: () -> Unit): Double {
    val start = System.nanoTime()
    block()
    return (System.nanoTime() - start) / 1e6
}

private fun mibPerSecond(ms: Double) = (1.0 / (ms / 1000.0))

private fun goal(met: Boolean) = if (met) "(met)" else "(not met)"

private fun sealOpenRow(rounds: Int) {
    val plaintext = Crypto.randomBytes(1 shl 20)
    val kek = StoredKeyKek.generate()
    val counters = InMemoryCounterStore()
    // A 1 MiB vault makes a blob of about 1.4 MB: above the server's default limit, as in the Swift bench.
    val sealer = VaultSealer(counters, hint = "bench", maxBlobBytes = 4 shl 20)
    val opener = VaultOpener(counters, maxBlobBytes = 4 shl 20)
    val key = SecretKeySpec(Crypto.randomBytes(32), "AES")
    var state = runSuspending { sealer.create(plaintext, "bench", listOf(Recipient(kek, "bench"))) }.state
    var blob = ByteArray(0)
    fun rawSeal(iv: ByteArray): ByteArray {
        val c = Cipher.getInstance("AES/GCM/NoPadding")
        c.init(Cipher.ENCRYPT_MODE, key, GCMParameterSpec(128, iv))
        return c.doFinal(plaintext)
    }
    fun rawOpen(iv: ByteArray, sealed: ByteArray) {
        val d = Cipher.getInstance("AES/GCM/NoPadding")
        d.init(Cipher.DECRYPT_MODE, key, GCMParameterSpec(128, iv))
        d.doFinal(sealed)
    }
    fun seal() {
        val s = runSuspending { sealer.seal(plaintext, state) }
        blob = s.blob
        state = s.state
        sealer.markAccepted(s)
    }
    fun open() { runSuspending { opener.open(blob, "bench", listOf(kek)) } }
    // Warm-up until the JIT has compiled the AES-GCM, base64url and JSON paths (C2 needs many calls).
    // Many small calls first: the GCM code is compiled (with its AES-NI/CLMUL intrinsics) only once it is hot.
    val small = ByteArray(4096)
    repeat(30_000) {
        val iv = Crypto.randomBytes(12)
        val c = Cipher.getInstance("AES/GCM/NoPadding")
        c.init(Cipher.ENCRYPT_MODE, key, GCMParameterSpec(128, iv))
        val sealedSmall = c.doFinal(small)
        val d = Cipher.getInstance("AES/GCM/NoPadding")
        d.init(Cipher.DECRYPT_MODE, key, GCMParameterSpec(128, iv))
        d.doFinal(sealedSmall)
    }
    val warmIv = Crypto.randomBytes(12)
    val warm = rawSeal(warmIv)
    repeat(60) { rawSeal(Crypto.randomBytes(12)); rawOpen(warmIv, warm); seal(); open() }
    val rawSeals = ArrayList<Double>(); val seals = ArrayList<Double>(); val rawOpens = ArrayList<Double>(); val opens = ArrayList<Double>()
    repeat(rounds) {
        // Paired and alternating: each round measures the anchor and the path back to back.
        rawSeals.add(timeMs { rawSeal(Crypto.randomBytes(12)) })
        seals.add(timeMs { seal() })
        val iv = Crypto.randomBytes(12)
        val sealed = rawSeal(iv)
        rawOpens.add(timeMs { rawOpen(iv, sealed) })
        opens.add(timeMs { open() })
    }
    val sealRatio = median(rawSeals) / median(seals)
    val openRatio = median(rawOpens) / median(opens)
    val anchor = "same JVM's `javax.crypto` AES-256-GCM on 1 MiB ($rounds paired alternating rounds after warm-up; medians)"
    println("| Kotlin/JVM seal a 1 MiB vault (JSON + base64url, A256KW entry) | ${"%.1f".format(mibPerSecond(median(seals)))} MiB/s | $anchor | ${"%.1f".format(mibPerSecond(median(rawSeals)))} MiB/s | ${"%.3f".format(sealRatio)}× | ≥ 0.5× ${goal(sealRatio >= 0.5)} |")
    println("| Kotlin/JVM open a 1 MiB vault (last `cipher` cut out per FORMAT.md §8.1, the rest through jackson-core) | ${"%.1f".format(mibPerSecond(median(opens)))} MiB/s | $anchor | ${"%.1f".format(mibPerSecond(median(rawOpens)))} MiB/s | ${"%.3f".format(openRatio)}× | ≥ 0.5× ${goal(openRatio >= 0.5)} |")
}

/** Peak heap use (all heap pools' peaks summed) since the last reset. */
private fun peakHeapBytes(): Long = ManagementFactory.getMemoryPoolMXBeans().filter { it.type == MemoryType.HEAP }.map { it.peakUsage.used }.sum()

private fun argon2Row(rounds: Int) {
    val costs = Argon2Costs.DEFAULT
    val saltText = "walletvault-bench-salt"
    val salt = Crypto.utf8(saltText)
    val password = Crypto.utf8("correct horse battery staple")
    val expected = Argon2id.derive(password, salt, costs) // also the warm-up
    val times = ArrayList<Double>()
    val cliTimes = ArrayList<Double>()
    var peak = 0L
    var cliMissing = false
    repeat(rounds) {
        System.gc()
        Thread.sleep(100)
        val baseline = ManagementFactory.getMemoryMXBean().heapMemoryUsage.used
        ManagementFactory.getMemoryPoolMXBeans().forEach { it.resetPeakUsage() }
        var out = ByteArray(0)
        times.add(timeMs { out = Argon2id.derive(password, salt, costs) })
        peak = maxOf(peak, peakHeapBytes() - baseline)
        check(out.contentEquals(expected))
        val cli = argon2Cli(password, saltText, costs)
        if (cli == null) cliMissing = true else {
            check(cli.second == TestSupport.hex(expected)) { "the argon2 CLI's output differs" }
            cliTimes.add(cli.first)
        }
    }
    val m = costs.memoryKiB * 1024L
    val cap = smallestHeapCapMiB()
    val peakRatio = (cap ?: Long.MAX_VALUE).toDouble() * (1 shl 20) / m
    val bc = org.bouncycastle.jce.provider.BouncyCastleProvider().versionStr
    if (cliMissing) {
        println("| Kotlin/JVM Argon2id m=65536 KiB, t=3, p=1 (BouncyCastle $bc) | ${"%.0f".format(median(times))} ms | Debian `argon2` CLI missing | – | – | ≤ 2×; peak heap ${"%.2f".format(peakRatio)} × m |")
        return
    }
    val ratio = median(times) / median(cliTimes)
    println("| Kotlin/JVM Argon2id m=65536 KiB, t=3, p=1 (BouncyCastle $bc), smallest JVM heap cap it runs in ${cap} MiB = ${"%.2f".format(peakRatio)} × m (heap pools' summed peaks ${peak / (1 shl 20)} MiB) | ${"%.0f".format(median(times))} ms | " +
        "Debian `argon2` CLI, same costs and inputs (outputs equal; $rounds alternating runs, medians) | ${"%.0f".format(median(cliTimes))} ms | ${"%.2f".format(ratio)}× | ≤ 2×, peak heap ≤ 2 × m ${goal(ratio <= 2.0 && peakRatio <= 2.0)} |")
}

/** Runs one derivation in JVMs with ever smaller `-Xmx` (2 MiB steps, bisection): the smallest cap that works. */
private fun smallestHeapCapMiB(): Long? {
    val java = java.io.File(System.getProperty("java.home"), "bin/java").path
    val classPath = System.getProperty("java.class.path")
    fun fits(mib: Long): Boolean {
        val process = ProcessBuilder(java, "-Xmx${mib}m", "-cp", classPath, "com.walletvault.BenchKt", "bench", "argon2-once")
            .redirectErrorStream(true).start()
        val output = String(process.inputStream.readBytes(), Charsets.UTF_8)
        return process.waitFor() == 0 && output.contains("ok 32")
    }
    var low = 32L
    var high = 160L
    if (!fits(high)) return null
    while (high - low > 2) {
        val middle = (low + high) / 2
        if (fits(middle)) high = middle else low = middle
    }
    return high
}

/** One run of the `argon2` CLI (Debian's reference implementation) at the same costs: (wall ms, hex output), or null. */
private fun argon2Cli(password: ByteArray, salt: String, costs: Argon2Costs): Pair<Double, String>? {
    val process = try {
        ProcessBuilder("argon2", salt, "-id", "-t", costs.iterations.toString(), "-k", costs.memoryKiB.toString(),
            "-p", costs.parallelism.toString(), "-l", "32", "-r").redirectErrorStream(true).start()
    } catch (e: java.io.IOException) {
        return null
    }
    val start = System.nanoTime()
    process.outputStream.use { it.write(password) }
    val output = String(process.inputStream.readBytes(), Charsets.US_ASCII).trim()
    process.waitFor()
    return Pair((System.nanoTime() - start) / 1e6, output)
}
