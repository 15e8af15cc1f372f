/// An instant in UTC with millisecond precision, read from and written as RFC 3339.
///
/// Only UTC is accepted on input (`Z`, `z` or `+00:00`), because the blob's `updatedUtc` is
/// compared across devices and a local offset would make those comparisons ambiguous.
public struct UTCTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let millisecondsSinceEpoch: Int64

    /// Creates a timestamp from milliseconds since the Unix epoch.
    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    /// Parses an RFC 3339 `date-time` in UTC; returns nil for any other text.
    public init?(rfc3339 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<start + count] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = digits(0, 4), bytes[4] == UInt8(ascii: "-"),
            let month = digits(5, 2), bytes[7] == UInt8(ascii: "-"),
            let day = digits(8, 2), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
            let hour = digits(11, 2), bytes[13] == UInt8(ascii: ":"),
            let minute = digits(14, 2), bytes[16] == UInt8(ascii: ":"),
            let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        var index = 19
        var milliseconds = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            var fractionDigits = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                if fractionDigits < 3 { milliseconds = milliseconds * 10 + Int(bytes[index] - 0x30) }
                fractionDigits += 1
                index += 1
            }
            guard fractionDigits > 0 else { return nil }
            for _ in fractionDigits..<max(fractionDigits, 3) { milliseconds *= 10 }
        }
        let zone = bytes[index...]
        guard zone.elementsEqual("Z".utf8) || zone.elementsEqual("z".utf8) || zone.elementsEqual("+00:00".utf8)
        else { return nil }
        // A leap second is folded into the next second; ordering stays monotonic.
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        self.millisecondsSinceEpoch = seconds * 1000 + Int64(milliseconds)
    }

    /// RFC 3339 text in UTC with exactly three fraction digits, e.g. `2026-08-12T19:00:00.000Z`.
    public var description: String {
        let (days, msOfDay) = millisecondsSinceEpoch.floorDivided(by: 86_400_000)
        let (year, month, day) = Self.civilFromDays(days)
        let seconds = Int(msOfDay / 1000)
        // Written into one buffer: the ETag of every load is made here, and a String per field and per padding cost
        // a tenth of a missed load's own code (docs/PERFORMANCE.md, issue 31).
        return String(unsafeUninitializedCapacity: 40) { text in
            var end = 0
            func put(_ value: Int, width: Int, then separator: UInt8?) {
                var digits = 1
                var rest = value / 10
                while rest > 0 {
                    digits += 1
                    rest /= 10
                }
                digits = max(digits, width)
                rest = value
                for index in stride(from: end + digits - 1, through: end, by: -1) {
                    text[index] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                    rest /= 10
                }
                end += digits
                if let separator {
                    text[end] = separator
                    end += 1
                }
            }
            if year < 0 {
                text[0] = UInt8(ascii: "-")
                end = 1
            }
            put(abs(year), width: 4, then: UInt8(ascii: "-"))
            put(month, width: 2, then: UInt8(ascii: "-"))
            put(day, width: 2, then: UInt8(ascii: "T"))
            put(seconds / 3600, width: 2, then: UInt8(ascii: ":"))
            put(seconds / 60 % 60, width: 2, then: UInt8(ascii: ":"))
            put(seconds % 60, width: 2, then: UInt8(ascii: "."))
            put(Int(msOfDay % 1000), width: 3, then: UInt8(ascii: "Z"))
            return end
        }
    }

    public static func < (lhs: UTCTimestamp, rhs: UTCTimestamp) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days: proleptic Gregorian, exact for all years used here.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilFromDays(_ days: Int64) -> (Int, Int, Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// Division rounding toward negative infinity, with a non-negative remainder.
    fileprivate func floorDivided(by divisor: Int64) -> (Int64, Int64) {
        let remainder = ((self % divisor) + divisor) % divisor
        return ((self - remainder) / divisor, remainder)
    }
}
