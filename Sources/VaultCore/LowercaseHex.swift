/// Bytes as lowercase hexadecimal, two digits a byte.
///
/// `String(format: "%02x")` per byte went through Foundation's format parser each time: on the PostgreSQL load path
/// the 16-byte change tag cost a tenth of a load's CPU (`perf`, issue 31).
public enum LowercaseHex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The hex digits of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
