/// The text jansson writes for a finite double: C's `%.17g` as glibc prints it, then jansson's `jsonp_dtostr`
/// repairs.
///
/// glibc prints the binary value's exact decimal expansion rounded to 17 significant digits, ties to even (the
/// default rounding mode). The expansion is finite, since every double is an integer times a power of two, and is
/// computed here exactly with a small unsigned big integer: `m · 2^e` is `m << e` when `e ≥ 0`, and
/// `(m · 5^-e) · 10^e` otherwise. Swift's own `description` gives the shortest text that reads back, which is often
/// shorter (`0.1` where jansson writes `0.10000000000000001`), so it cannot stand in.
enum JanssonRealText {
    private static let significantDigits = 17

    /// The bytes jansson writes for `value`, which must be finite.
    static func text(of value: Double) -> [UInt8] {
        precondition(value.isFinite, "jansson writes no text for a non-finite number")
        var (digits, exponent) = roundedDigits(of: value.magnitude)
        var text: [UInt8] = value.sign == .minus ? [UInt8(ascii: "-")] : []
        // %g: exponential form when the exponent is below -4 or not below the precision, trailing zeros dropped
        // either way (and the point with them when no fraction remains, there being no `#` flag).
        while digits.count > 1, digits.last == 0 { digits.removeLast() }
        func ascii(_ digit: UInt8) -> UInt8 { UInt8(ascii: "0") + digit }
        if exponent < -4 || exponent >= significantDigits {
            text.append(ascii(digits[0]))
            if digits.count > 1 {
                text.append(UInt8(ascii: "."))
                text.append(contentsOf: digits.dropFirst().map(ascii))
            }
            // jansson drops the `+` and the leading zeros C puts in the exponent.
            text.append(UInt8(ascii: "e"))
            if exponent < 0 { text.append(UInt8(ascii: "-")) }
            text.append(contentsOf: String(exponent.magnitude).utf8)
            return text
        }
        if exponent >= 0 {
            let whole = exponent + 1
            text.append(contentsOf: digits.prefix(whole).map(ascii))
            if digits.count < whole { text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: whole - digits.count)) }
            if digits.count > whole {
                text.append(UInt8(ascii: "."))
                text.append(contentsOf: digits.dropFirst(whole).map(ascii))
            }
        } else {
            text.append(UInt8(ascii: "0"))
            text.append(UInt8(ascii: "."))
            text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -exponent - 1))
            text.append(contentsOf: digits.map(ascii))
        }
        // jansson appends ".0" when neither a point nor an exponent is left, so that the text reads back as a real.
        if !text.contains(UInt8(ascii: ".")) { text.append(contentsOf: ".0".utf8) }
        return text
    }

    /// The first 17 significant decimal digits of a finite non-negative `value`, rounded half to even from its exact
    /// expansion, and the decimal exponent of the first (zero gives `[0]`, 0).
    private static func roundedDigits(of value: Double) -> (digits: [UInt8], exponent: Int) {
        guard value != 0 else { return ([0], 0) }
        var mantissa = value.significandBitPattern
        var binaryExponent: Int
        if value.exponentBitPattern == 0 {
            binaryExponent = -1074
        } else {
            mantissa |= 1 << 52
            binaryExponent = Int(value.exponentBitPattern) - 1075
        }
        let zeros = mantissa.trailingZeroBitCount
        mantissa >>= zeros
        binaryExponent += zeros
        var number = BigUnsigned(mantissa)
        var decimalExponent = 0
        if binaryExponent >= 0 {
            number.shiftLeft(by: binaryExponent)
        } else {
            // m · 2^e = m · 5^-e / 10^-e.
            var fives = -binaryExponent
            while fives > 0 {
                let step = min(fives, 13)  // 5^13 is the largest power of five below 2^32.
                number.multiply(by: (0..<step).reduce(UInt32(1)) { product, _ in product * 5 })
                fives -= step
            }
            decimalExponent = binaryExponent
        }
        let exact = number.decimalDigits()
        var exponent = exact.count - 1 + decimalExponent
        guard exact.count > significantDigits else { return (exact, exponent) }
        var digits = Array(exact.prefix(significantDigits))
        let next = exact[significantDigits]
        let beyondIsZero = exact[(significantDigits + 1)...].allSatisfy { $0 == 0 }
        let roundsUp = next > 5 || (next == 5 && (!beyondIsZero || digits[significantDigits - 1] % 2 == 1))
        if roundsUp {
            var index = significantDigits - 1
            while index >= 0, digits[index] == 9 {
                digits[index] = 0
                index -= 1
            }
            if index >= 0 {
                digits[index] += 1
            } else {
                digits.insert(1, at: 0)
                digits.removeLast()
                exponent += 1
            }
        }
        return (digits, exponent)
    }
}

/// Just enough of an unsigned big integer for `JanssonRealText`: built from a 64-bit value, multiplied by small
/// numbers, shifted left, written in decimal. Limbs are 32 bits, least significant first.
private struct BigUnsigned {
    private var limbs: [UInt32]

    init(_ value: UInt64) {
        limbs = [UInt32(truncatingIfNeeded: value), UInt32(truncatingIfNeeded: value >> 32)]
        trim()
    }

    mutating func multiply(by factor: UInt32) {
        var carry: UInt64 = 0
        for index in limbs.indices {
            let product = UInt64(limbs[index]) * UInt64(factor) + carry
            limbs[index] = UInt32(truncatingIfNeeded: product)
            carry = product >> 32
        }
        if carry != 0 { limbs.append(UInt32(carry)) }
    }

    mutating func shiftLeft(by bits: Int) {
        let whole = bits / 32
        let part = bits % 32
        if part != 0 {
            var carry: UInt32 = 0
            for index in limbs.indices {
                let limb = limbs[index]
                limbs[index] = limb << part | carry
                carry = limb >> (32 - part)
            }
            if carry != 0 { limbs.append(carry) }
        }
        limbs.insert(contentsOf: repeatElement(0, count: whole), at: 0)
    }

    /// The decimal digits, most significant first, without leading zeros ("0" for zero).
    func decimalDigits() -> [UInt8] {
        var remaining = limbs
        var chunks: [UInt32] = []  // base 10^9, least significant first
        while !remaining.isEmpty {
            var remainder: UInt64 = 0
            for index in remaining.indices.reversed() {
                let dividend = remainder << 32 | UInt64(remaining[index])
                remaining[index] = UInt32(dividend / 1_000_000_000)
                remainder = dividend % 1_000_000_000
            }
            chunks.append(UInt32(remainder))
            while remaining.last == 0 { remaining.removeLast() }
        }
        var digits: [UInt8] = []
        for (index, chunk) in chunks.reversed().enumerated() {
            var chunkDigits = [UInt8](repeating: 0, count: 9)
            var value = chunk
            for position in (0..<9).reversed() {
                chunkDigits[position] = UInt8(value % 10)
                value /= 10
            }
            // Only the most significant chunk may start with zeros that are not digits of the number.
            digits.append(contentsOf: index == 0 ? Array(chunkDigits.drop { $0 == 0 }) : chunkDigits)
        }
        return digits.isEmpty ? [0] : digits
    }

    private mutating func trim() {
        while limbs.last == 0 { limbs.removeLast() }
    }
}
