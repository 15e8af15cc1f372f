package com.walletvault

/** RFC 3339 date-times in UTC, millisecond precision, as the Swift `UTCTimestamp` reads and writes them. */
object UtcTime {
    /** Milliseconds since the epoch, or null unless [text] is an RFC 3339 date-time with `Z`, `z` or `+00:00`. */
    fun parse(text: String): Long? {
        val b = text
        if (b.length < 20 || b.length > 40) return null
        fun digits(start: Int, count: Int): Int? {
            if (start + count > b.length) return null
            var value = 0
            for (i in start until start + count) {
                val c = b[i]
                if (c < '0' || c > '9') return null
                value = value * 10 + (c - '0')
            }
            return value
        }
        val year = digits(0, 4) ?: return null
        if (b[4] != '-') return null
        val month = digits(5, 2) ?: return null
        if (b[7] != '-') return null
        val day = digits(8, 2) ?: return null
        if (b[10] != 'T' && b[10] != 't') return null
        val hour = digits(11, 2) ?: return null
        if (b[13] != ':') return null
        val minute = digits(14, 2) ?: return null
        if (b[16] != ':') return null
        val second = digits(17, 2) ?: return null
        if (month !in 1..12 || day < 1 || day > daysIn(month, year) || hour >= 24 || minute >= 60 || second > 60) return null
        var index = 19
        var millis = 0
        if (b[index] == '.') {
            index++
            var fractionDigits = 0
            while (index < b.length && b[index] in '0'..'9') {
                if (fractionDigits < 3) millis = millis * 10 + (b[index] - '0')
                fractionDigits++
                index++
            }
            if (fractionDigits == 0) return null
            for (i in fractionDigits until 3) millis *= 10
        }
        val zone = b.substring(index)
        if (zone != "Z" && zone != "z" && zone != "+00:00") return null
        val days = daysFromCivil(year, month, day)
        return (days * 86_400L + hour * 3600 + minute * 60 + second) * 1000 + millis
    }

    /** `YYYY-MM-DDThh:mm:ss.sssZ`. */
    fun formatted(millis: Long): String {
        val days = Math.floorDiv(millis, 86_400_000L)
        val msOfDay = Math.floorMod(millis, 86_400_000L)
        val (year, month, day) = civilFromDays(days)
        val seconds = (msOfDay / 1000).toInt()
        return String.format(java.util.Locale.ROOT, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, month, day, seconds / 3600, seconds / 60 % 60, seconds % 60, (msOfDay % 1000).toInt())
    }

    fun now(): Long = System.currentTimeMillis()

    private fun daysIn(month: Int, year: Int) = when (month) {
        2 -> if ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0) 29 else 28
        4, 6, 9, 11 -> 30
        else -> 31
    }

    private fun daysFromCivil(year: Int, month: Int, day: Int): Long {
        val y = if (month <= 2) year - 1 else year
        val era = (if (y >= 0) y else y - 399) / 400
        val yoe = y - era * 400
        val doy = (153 * (month + (if (month > 2) -3 else 9)) + 2) / 5 + day - 1
        val doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097L + doe - 719_468
    }

    private fun civilFromDays(days: Long): Triple<Int, Int, Int> {
        val z = days + 719_468
        val era = (if (z >= 0) z else z - 146_096) / 146_097
        val doe = z - era * 146_097
        val yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        val doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        val mp = (5 * doy + 2) / 153
        val day = doy - (153 * mp + 2) / 5 + 1
        val month = if (mp < 10) mp + 3 else mp - 9
        return Triple((yoe + era * 400 + (if (month <= 2) 1 else 0)).toInt(), month.toInt(), day.toInt())
    }
}
