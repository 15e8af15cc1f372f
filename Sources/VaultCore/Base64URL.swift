import Foundation

/// Base64url without padding (RFC 4648 §5), strict on input.
///
/// Decoding refuses padding, the `+` and `/` alphabet, whitespace and encodings whose unused
/// trailing bits are not zero, so that every byte string has exactly one accepted spelling.
/// Foundation does the coding; this type only swaps the two alphabet letters and the padding.
public enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    public static func encode<D: DataProtocol>(_ bytes: D) -> String {
        var encoded = Data(bytes).base64EncodedData()
        while encoded.last == UInt8(ascii: "=") { encoded.removeLast() }
        for index in encoded.indices {
            switch encoded[index] {
            case UInt8(ascii: "+"): encoded[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): encoded[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// Decodes unpadded base64url; returns nil for anything that is not its canonical spelling.
    public static func decode(_ text: String) -> Data? {
        decode(Substring(text))
    }

    /// Decodes unpadded base64url from a substring; returns nil for anything non-canonical.
    public static func decode(_ text: Substring) -> Data? {
        var standard = Data(text.utf8)
        let remainder = standard.count % 4
        guard remainder != 1 else { return nil }
        for index in standard.indices {
            switch standard[index] {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                break
            case UInt8(ascii: "-"): standard[index] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): standard[index] = UInt8(ascii: "/")
            default: return nil
            }
        }
        // The last letter of a 2- or 3-letter tail carries 4 or 2 unused bits; they must be zero.
        if remainder != 0, let last = standard.last, let value = sextet(last), value & (remainder == 2 ? 0x0F : 0x03) != 0 {
            return nil
        }
        if remainder != 0 { standard.append(contentsOf: repeatElement(UInt8(ascii: "="), count: 4 - remainder)) }
        return Data(base64Encoded: standard)
    }

    private static func sextet(_ letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): letter - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): letter - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): letter - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
