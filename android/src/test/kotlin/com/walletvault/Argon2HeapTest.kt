package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File
import java.util.concurrent.TimeUnit

class Argon2HeapTest {
    /** RFC 9106 §5.3 (Argon2id, v=0x13, m=32 KiB, t=3, p=4, with secret and associated data). */
    @Test
    fun rfc9106Vector() {
        val parameters = org.bouncycastle.crypto.params.Argon2Parameters.Builder(org.bouncycastle.crypto.params.Argon2Parameters.ARGON2_id)
            .withVersion(0x13).withIterations(3).withMemoryAsKB(32).withParallelism(4)
            .withSalt(ByteArray(16) { 2 }).withSecret(ByteArray(8) { 3 }).withAdditional(ByteArray(12) { 4 }).build()
        val generator = org.bouncycastle.crypto.generators.Argon2BytesGenerator()
        generator.init(parameters)
        val out = ByteArray(32)
        generator.generateBytes(ByteArray(32) { 1 }, out)
        assertEquals("0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659", TestSupport.hex(out))
    }

    /**
     * The format's default costs (m = 64 MiB) in a JVM whose heap is capped at 2 × m + 16 MiB: BouncyCastle has been
     * reported to allocate many times m, which would fail here with OutOfMemoryError.
     */
    @Test
    fun defaultCostsFitInTwiceTheirMemory() {
        val java = File(System.getProperty("java.home"), "bin/java").path
        // The console launcher loads the tests through its own class loader: name the jars by where the classes came from.
        val classPath = listOf(Argon2id::class.java, Argon2HeapTest::class.java, org.bouncycastle.crypto.params.Argon2Parameters::class.java,
            Unit::class.java, com.fasterxml.jackson.core.JsonFactory::class.java)
            .map { File(it.protectionDomain.codeSource.location.toURI()).path }.distinct().joinToString(File.pathSeparator)
        val process = ProcessBuilder(java, "-Xmx144m", "-cp", classPath, "com.walletvault.BenchKt", "bench", "argon2-once")
            .redirectErrorStream(true).start()
        assertTrue(process.waitFor(60, TimeUnit.SECONDS))
        val output = String(process.inputStream.readBytes(), Charsets.UTF_8)
        assertEquals(0, process.exitValue(), output)
        assertTrue(output.contains("ok 32"), output)
    }
}
