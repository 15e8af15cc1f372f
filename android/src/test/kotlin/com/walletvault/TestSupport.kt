package com.walletvault

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.fail
import java.io.File

object TestSupport {
    /** The format vectors, read from the repository (tests run in android/). */
    val vectorDirectory = File("../Tests/VaultEnvelopeTests/Vectors/format")
    val plaintext = Crypto.utf8("{\"items\":{\"pid-1\":{\"type\":\"PID\",\"issuer\":\"https://issuer.example\"}}}")

    /** Re-serialises a blob after an edit of its top-level members (a LinkedHashMap keeps their order). */
    fun edit(blob: ByteArray, change: (LinkedHashMap<String, JsonValue>) -> Unit): ByteArray {
        val top = Json.parse(blob) as JsonValue.Obj
        val members = LinkedHashMap<String, JsonValue>()
        for ((k, v) in top.members) members[k] = v
        change(members)
        return Json.write(JsonValue.Obj(members.entries.map { Pair(it.key, it.value) }))
    }

    fun entries(members: Map<String, JsonValue>): MutableList<JsonValue.Obj> =
        (members["wrappedDeks"] as JsonValue.Arr).elements.map { it as JsonValue.Obj }.toMutableList()

    fun withMember(obj: JsonValue.Obj, name: String, value: JsonValue?): JsonValue.Obj {
        val members = obj.members.filter { it.first != name }.toMutableList()
        if (value != null) {
            val index = obj.members.indexOfFirst { it.first == name }
            if (index >= 0) members.add(index, Pair(name, value)) else members.add(Pair(name, value))
        }
        return JsonValue.Obj(members)
    }

    inline fun <reified E : VaultException> expectThrows(block: () -> Unit): E {
        try {
            block()
        } catch (e: VaultException) {
            if (e is E) return e
            fail<Unit>("expected ${E::class.java.simpleName}, got ${e.javaClass.simpleName}: ${e.message}")
        }
        fail<Unit>("expected ${E::class.java.simpleName}, nothing thrown")
        throw AssertionError()
    }

    fun hex(bytes: ByteArray) = bytes.joinToString("") { String.format(java.util.Locale.ROOT, "%02x", it) }

    fun assertBytes(expected: ByteArray, actual: ByteArray) = assertEquals(hex(expected), hex(actual))
}

/** A SecretKey the test can destroy: afterwards it has no encoding, and `Cipher.init` throws InvalidKeyException. */
class InvalidatableKey(private val bytes: ByteArray) : javax.crypto.SecretKey {
    @Volatile private var gone = false
    val isGone: Boolean get() = gone
    fun invalidate() { gone = true }
    override fun getAlgorithm() = "AES"
    override fun getFormat() = "RAW"
    override fun getEncoded(): ByteArray? = if (gone) null else bytes.copyOf()
}
