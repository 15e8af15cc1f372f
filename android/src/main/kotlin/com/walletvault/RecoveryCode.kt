package com.walletvault

/**
 * A recovery code (FORMAT.md §7.4): 140 random bits as 7 groups of 4 Crockford base32 characters plus a Luhn
 * mod 32 check character that also mixes in the group's position.
 */
class RecoveryCode private constructor(private val canonical: ByteArray) {
    /** The 28 random characters, upper case ASCII, without dashes or check characters: the HKDF input. */
    internal fun canonicalBytes(): ByteArray = canonical.copyOf()

    /** `XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX`. */
    val formatted: String
        get() = (0 until GROUPS).joinToString("-") { group ->
            val data = canonical.copyOfRange(group * 4, group * 4 + 4)
            val values = IntArray(5).also { v -> v[0] = group; for (i in 0 until 4) v[i + 1] = ALPHABET.indexOf((data[i].toInt() and 0xFF).toChar()) }
            String(data, Charsets.US_ASCII) + ALPHABET[luhnCheck(values)]
        }

    override fun toString() = "RecoveryCode(7 groups)"

    companion object {
        const val ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
        const val GROUPS = 7

        fun generate(): RecoveryCode {
            val random = Crypto.randomBytes(18)
            val symbols = ByteArray(GROUPS * 4)
            for (index in symbols.indices) {
                val bit = index * 5
                val window = ((random[bit / 8].toInt() and 0xFF) shl 8) or (random[bit / 8 + 1].toInt() and 0xFF)
                symbols[index] = (ALPHABET[(window ushr (11 - bit % 8)) and 0x1F] - '\u0000').toByte()
            }
            java.util.Arrays.fill(random, 0)
            return RecoveryCode(symbols)
        }

        /**
         * What a reader skips in a typed or pasted code (§7.4): `-`, space, tab, LF, CR and no-break space (U+00A0,
         * which copying from a web page or PDF produces). Nothing else.
         */
        const val IGNORED = "- \t\n\r\u00A0"

        /**
         * Reads a typed code: ASCII case ignored, [IGNORED] characters skipped, `O` read as 0, `I` and `L` as 1; any
         * other character (non-ASCII ones, full-width digits and `U` among them) is refused; names the groups that fail.
         */
        fun parse(text: String): RecoveryCode {
            val symbols = ArrayList<Int>()
            for (c in text) {
                if (c > '\u007F' && c != '\u00A0') throw VaultException.InvalidRecoveryCode("a recovery code uses only 0-9 and A-Z without U")
                when (c) {
                    '-', ' ', '\t', '\n', '\r', '\u00A0' -> Unit
                    'O', 'o' -> symbols.add(0)
                    'I', 'i', 'L', 'l' -> symbols.add(1)
                    else -> {
                        val value = ALPHABET.indexOf(if (c in 'a'..'z') c - 32 else c)
                        if (value < 0) throw VaultException.InvalidRecoveryCode("a recovery code uses only 0-9 and A-Z without U")
                        symbols.add(value)
                    }
                }
            }
            if (symbols.size != GROUPS * 5) throw VaultException.InvalidRecoveryCode("a recovery code has $GROUPS groups of 5 characters")
            val mistyped = ArrayList<Int>()
            val canonical = ByteArray(GROUPS * 4)
            for (group in 0 until GROUPS) {
                val values = IntArray(6)
                values[0] = group
                for (i in 0 until 5) values[i + 1] = symbols[group * 5 + i]
                if (luhnSum(values, false) % 32 != 0) mistyped.add(group + 1)
                for (i in 0 until 4) canonical[group * 4 + i] = (ALPHABET[values[i + 1]] - '\u0000').toByte()
            }
            if (mistyped.isNotEmpty()) throw VaultException.InvalidRecoveryCode("group ${mistyped.joinToString(", ")} does not match its check character")
            return RecoveryCode(canonical)
        }

        /** Σ (a div 32) + (a mod 32), counting from the last value, doubling every other one. */
        private fun luhnSum(values: IntArray, doubleLast: Boolean): Int {
            var double = doubleLast
            var sum = 0
            for (i in values.indices.reversed()) {
                val addend = values[i] * (if (double) 2 else 1)
                sum += addend / 32 + addend % 32
                double = !double
            }
            return sum
        }

        private fun luhnCheck(values: IntArray): Int = (32 - luhnSum(values, true) % 32) % 32
    }
}
