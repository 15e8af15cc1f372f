package com.walletvault

import java.io.ByteArrayOutputStream

/** `enc(value)` of FORMAT.md §5.1: defined on parsed values, so re-serialising a blob changes nothing authenticated. */
internal object CanonicalEncoding {
    fun encode(value: JsonValue): ByteArray = ByteArrayOutputStream().also { encode(value, it) }.toByteArray()

    fun encode(value: JsonValue, out: ByteArrayOutputStream) {
        when (value) {
            is JsonValue.Null -> out.write(('n' - '\u0000'))
            is JsonValue.Bool -> out.write(if (value.value) ('t' - '\u0000') else ('f' - '\u0000'))
            is JsonValue.Integer -> {
                out.write(('i' - '\u0000'))
                for (shift in 56 downTo 0 step 8) out.write((value.value ushr shift).toInt() and 0xFF)
            }
            is JsonValue.Number -> throw VaultException.Malformed("authenticated members must not contain fractional numbers")
            is JsonValue.Str -> {
                out.write(('s' - '\u0000'))
                lengthPrefixed(value.value, out)
            }
            is JsonValue.Arr -> {
                out.write(('a' - '\u0000'))
                out.write(Crypto.u32be(value.elements.size))
                for (element in value.elements) encode(element, out)
            }
            is JsonValue.Obj -> {
                out.write(('o' - '\u0000'))
                out.write(Crypto.u32be(value.members.size))
                val sorted = value.members.map { Pair(Crypto.utf8(it.first), it.second) }.sortedWith(Comparator { a, b -> compareBytes(a.first, b.first) })
                for ((name, member) in sorted) {
                    out.write(Crypto.u32be(name.size))
                    out.write(name)
                    encode(member, out)
                }
            }
        }
    }

    fun lengthPrefixed(text: String, out: ByteArrayOutputStream) {
        val bytes = Crypto.utf8(text)
        out.write(Crypto.u32be(bytes.size))
        out.write(bytes)
    }

    /** Unsigned lexicographic order, a shorter prefix first. */
    fun compareBytes(a: ByteArray, b: ByteArray): Int {
        for (i in 0 until minOf(a.size, b.size)) {
            val d = (a[i].toInt() and 0xFF) - (b[i].toInt() and 0xFF)
            if (d != 0) return d
        }
        return a.size - b.size
    }
}

/** Header MACs and additional data of the extended form (FORMAT.md §5.2, §5.3). */
internal class HeaderAuthenticator(dek: ByteArray) {
    private val macKey = Crypto.hkdf(dek, ByteArray(0), Crypto.utf8("WalletVault-v1 header MAC key"), 32)

    fun macs(header: JsonValue.Obj): ByteArray {
        val out = ByteArrayOutputStream(MACS_BYTES)
        for ((name, _) in MACED) out.write(mac(name, header[name]))
        return out.toByteArray()
    }

    /** Compares position by position and throws the first mismatch's typed error. */
    fun verify(macs: ByteArray, header: JsonValue.Obj) {
        for ((index, member) in MACED.withIndex()) {
            val expected = mac(member.first, header[member.first])
            val stored = macs.copyOfRange(index * 16, index * 16 + 16)
            if (!Crypto.constantTimeEquals(expected, stored)) {
                val message = "${member.first} is not what the writer authenticated"
                throw when (member.second) {
                    "recipientsAltered" -> VaultException.RecipientsAltered(message)
                    "timestampAltered" -> VaultException.TimestampAltered(message)
                    "hintAltered" -> VaultException.HintAltered(message)
                    else -> VaultException.CounterAltered(message)
                }
            }
        }
    }

    private fun mac(name: String, value: JsonValue?): ByteArray {
        val input = ByteArrayOutputStream()
        input.write(MAC_DOMAIN)
        CanonicalEncoding.lengthPrefixed(name, input)
        if (value != null) CanonicalEncoding.encode(value, input) else input.write(('x' - '\u0000'))
        return Crypto.hmac(macKey, input.toByteArray()).copyOf(16)
    }

    companion object {
        const val MACS_BYTES = 80
        private val MACED = listOf("wrappedDeks" to "recipientsAltered", "updatedUtc" to "timestampAltered",
            "hint" to "hintAltered", "counter" to "counterAltered", "dek_seals" to "counterAltered")
        private val MAC_DOMAIN = Crypto.utf8("WalletVault-v1-MAC") + byteArrayOf(0)
        private val AAD_DOMAIN = Crypto.utf8("WalletVault-v1-AAD") + byteArrayOf(0)

        fun additionalData(header: JsonValue.Obj): ByteArray {
            val out = ByteArrayOutputStream()
            out.write(AAD_DOMAIN)
            CanonicalEncoding.encode(header, out)
            return out.toByteArray()
        }
    }
}
