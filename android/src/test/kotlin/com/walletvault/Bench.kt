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
    val rounds = args.getOrNull(2)?.toIntOrNull() ?: 30
    if (mode == "all" || mode == "seal") sealOpenRow(rounds)
    if (mode == "all" || mode == "argon2") argon2Row(maxOf(3, rounds / 10))
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

private fun sealOpenRow(rounds: Int) {
    val plaintext = Crypto.randomBytes(1 shl 20)
    val kek = StoredKeyKek.generate()
    val counters = InMemoryCounterStore()
    // The server's limit is 1 MiB of blob; a 1 MiB vault needs a larger limit, as the Swift bench uses.
    val sealer = VaultSealer(counters, hint = "bench", maxBlobBytes = 4 shl 20)
    val opener = VaultOpener(counters)
    val key = Crypto.randomBytes(32)
    val rawSeal = ArrayList<Double>(); val seal = ArrayList<Double>(); val rawOpen = ArrayList<Double>(); val open = ArrayList<Double>()
    var state = runSuspending { sealer.create(plaintext, "bench", listOf(Recipient(kek, "bench"))) }.state
    var blob = ByteArray(0)
    var sealedRaw = ByteArray(0)
    val iv = Crypto.randomBytes(12)
    repeat(rounds + 5) { round ->
        val warm = round < 5
        val a = timeMs {
            val c = Cipher.getInstance("AES/GCM/NoPadding")
            c.init(Cipher.ENCRYPT_MODE, SecretKeySpec(key, "AES"), GCMParameterSpec(128, Crypto.randomBytes(12)))
            sealedRaw = c.doFinal(plaintext)
        }
        val b = timeMs {
            val s = runSuspending { sealer.seal(plaintext, state) }
            blob = s.blob
            state = s.state
            sealer.markAccepted(s)
        }
        val c0 = Cipher.getInstance("AES/GCM/NoPadding")
        c0.init(Cipher.ENCRYPT_MODE, SecretKeySpec(key, "AES"), GCMParameterSpec(128, iv))
        sealedRaw = c0.doFinal(plaintext)
        val c = timeMs {
            val d = Cipher.getInstance("AES/GCM/NoPadding")
            d.init(Cipher.DECRYPT_MODE, SecretKeySpec(key, "AES"), GCMParameterSpec(128, iv))
            d.doFinal(sealedRaw)
        }
        val d = timeMs { runSuspending { opener.open(blob, "bench", listOf(kek)) } }
        if (!warm) { rawSeal.add(a); seal.add(b); rawOpen.add(c); open.add(d) }
    }
    val sealRatio = median(rawSeal) / median(seal)
    val openRatio = median(rawOpen) / median(open)
    println("| JVM seal 1 MiB vault (A256KW entry) vs raw AES-256-GCM 1 MiB | ${"%.2f".format(median(seal))} ms vs ${"%.2f".format(median(rawSeal))} ms | ${"%.2f".format(sealRatio)}× of raw (goal ≥ 0.5×) | ${rounds} rounds, blob ${blob.size} B |")
    println("| JVM open 1 MiB vault (A256KW entry) vs raw AES-256-GCM open 1 MiB | ${"%.2f".format(median(open))} ms vs ${"%.2f".format(median(rawOpen))} ms | ${"%.2f".format(openRatio)}× of raw (goal ≥ 0.5×) | ${rounds} rounds |")
}

/** Peak heap use (all heap pools' peaks summed) since the last reset. */
private fun peakHeapBytes(): Long = ManagementFactory.getMemoryPoolMXBeans().filter { it.type == MemoryType.HEAP }.map { it.peakUsage.used }.sum()

private fun argon2Row(rounds: Int) {
    val costs = Argon2Costs.DEFAULT
    val salt = Crypto.randomBytes(16)
    val password = Crypto.utf8("correct horse battery staple")
    Argon2id.derive(password, salt, costs) // warm-up
    val times = ArrayList<Double>()
    var peak = 0L
    repeat(rounds) {
        System.gc()
        Thread.sleep(100)
        val baseline = ManagementFactory.getMemoryMXBean().heapMemoryUsage.used
        ManagementFactory.getMemoryPoolMXBeans().forEach { it.resetPeakUsage() }
        times.add(timeMs { Argon2id.derive(password, salt, costs) })
        peak = maxOf(peak, peakHeapBytes() - baseline)
    }
    val m = costs.memoryKiB * 1024L
    val cli = argon2Cli(password, salt, costs)
    val ratio = cli?.let { median(times) / it }
    println("| JVM Argon2id m=64 MiB t=3 p=1 (BouncyCastle ${org.bouncycastle.jce.provider.BouncyCastleProvider().info.substringAfter("v").substringBefore(" ")}) vs `argon2` CLI | " +
        "${"%.0f".format(median(times))} ms vs ${cli?.let { "%.0f".format(it) } ?: "n/a"} ms | ${ratio?.let { "%.2f".format(it) + "× of the CLI (goal ≤ 2×)" } ?: "CLI missing"} | " +
        "peak heap above baseline ${peak / (1 shl 20)} MiB = ${"%.2f".format(peak.toDouble() / m)} × m (goal ≤ 2 × m); ${rounds} rounds |")
}

/** The median wall time of the `argon2` CLI (Debian's reference implementation) at the same costs, or null. */
private fun argon2Cli(password: ByteArray, salt: ByteArray, costs: Argon2Costs): Double? {
    val times = ArrayList<Double>()
    val saltText = String(salt.map { ('a' + (it.toInt() and 0x0F)) }.toCharArray()) // the CLI takes the salt as text
    repeat(5) {
        val process = try {
            ProcessBuilder("argon2", saltText, "-id", "-t", costs.iterations.toString(), "-k", costs.memoryKiB.toString(),
                "-p", costs.parallelism.toString(), "-l", "32", "-r").redirectErrorStream(true).start()
        } catch (e: java.io.IOException) {
            return null
        }
        val start = System.nanoTime()
        process.outputStream.use { it.write(password) }
        process.inputStream.readBytes()
        process.waitFor()
        times.add((System.nanoTime() - start) / 1e6)
    }
    return median(times)
}
