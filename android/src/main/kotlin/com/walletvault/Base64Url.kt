package com.walletvault

/**
 * Unpadded base64url (RFC 4648 §5), canonical spellings only (FORMAT.md §1.1): no `=`, `+`, `/`, whitespace or
 * other characters, no length ≡ 1 (mod 4), and the unused low bits of the last character must be zero.
 */
internal object Base64Url {
    private const val ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    private val VALUES = IntArray(128) { -1 }.also { table -> for (i in ALPHABET.indices) table[ALPHABET[i] - '\u0000'] = i }

    fun encode(bytes: ByteArray): String {
        val out = StringBuilder((bytes.size * 4 + 2) / 3)
        var i = 0
        while (i + 3 <= bytes.size) {
            val n = (bytes[i].toInt() and 0xFF shl 16) or (bytes[i + 1].toInt() and 0xFF shl 8) or (bytes[i + 2].toInt() and 0xFF)
            out.append(ALPHABET[n ushr 18]).append(ALPHABET[n ushr 12 and 63]).append(ALPHABET[n ushr 6 and 63]).append(ALPHABET[n and 63])
            i += 3
        }
        when (bytes.size - i) {
            1 -> {
                val n = bytes[i].toInt() and 0xFF
                out.append(ALPHABET[n ushr 2]).append(ALPHABET[n shl 4 and 63])
            }
            2 -> {
                val n = (bytes[i].toInt() and 0xFF shl 8) or (bytes[i + 1].toInt() and 0xFF)
                out.append(ALPHABET[n ushr 10]).append(ALPHABET[n ushr 4 and 63]).append(ALPHABET[n shl 2 and 63])
            }
        }
        return out.toString()
    }

    /** As [decode] for the ASCII bytes `bytes[from until to]` (any byte outside the alphabet refuses). */
    fun decode(bytes: ByteArray, from: Int, to: Int): ByteArray? {
        val length = to - from
        if (length < 0 || length % 4 == 1) return null
        val out = ByteArray(length / 4 * 3 + maxOf(0, length % 4 - 1))
        var o = 0
        var i = from
        while (to - i >= 4) {
            val a = value(bytes[i]); val b = value(bytes[i + 1]); val c = value(bytes[i + 2]); val d = value(bytes[i + 3])
            if ((a or b or c or d) < 0) return null
            val n = (a shl 18) or (b shl 12) or (c shl 6) or d
            out[o] = (n ushr 16).toByte(); out[o + 1] = (n ushr 8).toByte(); out[o + 2] = n.toByte()
            o += 3
            i += 4
        }
        when (to - i) {
            2 -> {
                val a = value(bytes[i]); val b = value(bytes[i + 1])
                if ((a or b) < 0 || b and 0x0F != 0) return null
                out[o] = ((a shl 2) or (b ushr 4)).toByte()
            }
            3 -> {
                val a = value(bytes[i]); val b = value(bytes[i + 1]); val c = value(bytes[i + 2])
                if ((a or b or c) < 0 || c and 0x03 != 0) return null
                out[o] = ((a shl 2) or (b ushr 4)).toByte(); out[o + 1] = ((b shl 4) or (c ushr 2)).toByte()
            }
        }
        return out
    }

    private fun value(byte: Byte): Int { val b = byte.toInt(); return if (b < 0) -1 else VALUES[b] }

    /** The bytes of a canonical unpadded base64url text, or null for any other text. */
    fun decode(text: CharSequence): ByteArray? {
        val length = text.length
        if (length % 4 == 1) return null
        val out = ByteArray(length / 4 * 3 + maxOf(0, length % 4 - 1))
        var o = 0
        var accumulator = 0
        var bits = 0
        for (index in 0 until length) {
            val c = text[index] - '\u0000'
            val value = if (c < 128) VALUES[c] else -1
            if (value < 0) return null
            accumulator = (accumulator shl 6) or value
            bits += 6
            if (bits >= 8) {
                bits -= 8
                out[o++] = (accumulator ushr bits).toByte()
                accumulator = accumulator and ((1 shl bits) - 1)
            }
        }
        // Leftover bits (2 or 4) must be zero: each byte string has exactly one accepted spelling.
        if (accumulator != 0) return null
        return out
    }
}
