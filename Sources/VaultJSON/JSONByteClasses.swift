/// Byte-level tests shared by the portable JSON reader and writer: JSON whitespace, the bytes that end a run of
/// plain string content, hex digits and strict UTF-8.
///
/// Kept apart from the grammar so that the loops over a megabyte string stay small enough to read and to inline.
enum JSONByteClasses {
    /// Whether `byte` is JSON whitespace (RFC 8259 §2): space, tab, line feed, carriage return. Vertical tab and
    /// form feed are not, although yajl's lexer takes them for whitespace.
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// For eight string bytes loaded little-endian, a mask whose lowest set bit lies in the first byte that a reader
    /// must look at: a quote, a backslash, a control character below 0x20, or a byte of a multi-byte UTF-8 sequence;
    /// zero when all eight are plain ASCII text.
    ///
    /// The zero-byte tests borrow across bytes, so bits may also be set above the first match, never below it:
    /// the lowest bit is exact, which is all a reader uses.
    @inline(__always)
    static func readerStops(in word: UInt64) -> UInt64 {
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl | word) & highBits
    }

    /// As `readerStops(in:)`, without the bytes of multi-byte sequences: what a JSON writer must escape (a
    /// quote, a backslash, a control character below 0x20); zero when none of the eight bytes needs escaping.
    @inline(__always)
    static func writerStops(in word: UInt64) -> UInt64 {
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        // Borrowing from a byte at or above 0x80 cannot flag it: `& ~word` clears its high bit.
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl) & highBits
    }

    /// The value of an ASCII hex digit, either case, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte &- UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte &- UInt8(ascii: "a") &+ 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte &- UInt8(ascii: "A") &+ 10)
        default: nil
        }
    }

    /// The length of the well-formed UTF-8 sequence starting at `bytes[offset]`, a byte at or above 0x80, or nil
    /// when it is not one (Unicode 15, table 3-7): no overlong forms, no surrogates, nothing above U+10FFFF, no
    /// sequence cut short by `end`. This is the check `String(validating:as:)` makes, which the yajl path's tree
    /// builder applies after yajl's laxer lexer.
    @inline(__always)
    static func utf8SequenceLength(_ bytes: UnsafePointer<UInt8>, at offset: Int, end: Int) -> Int? {
        let lead = bytes[offset]
        @inline(__always) func continuation(_ index: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
            index < end && (low...high).contains(bytes[index])
        }
        switch lead {
        case 0xC2...0xDF:
            return continuation(offset + 1) ? 2 : nil
        case 0xE0:
            return continuation(offset + 1, 0xA0) && continuation(offset + 2) ? 3 : nil
        case 0xE1...0xEC, 0xEE...0xEF:
            return continuation(offset + 1) && continuation(offset + 2) ? 3 : nil
        case 0xED:
            return continuation(offset + 1, 0x80, 0x9F) && continuation(offset + 2) ? 3 : nil
        case 0xF0:
            return continuation(offset + 1, 0x90) && continuation(offset + 2) && continuation(offset + 3) ? 4 : nil
        case 0xF1...0xF3:
            return continuation(offset + 1) && continuation(offset + 2) && continuation(offset + 3) ? 4 : nil
        case 0xF4:
            return continuation(offset + 1, 0x80, 0x8F) && continuation(offset + 2) && continuation(offset + 3) ? 4 : nil
        default:
            return nil
        }
    }
}
