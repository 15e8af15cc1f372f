import Foundation

/// Base64url without padding (RFC 4648 §5), strict on input.
///
/// Decoding refuses padding, the `+` and `/` alphabet, whitespace and encodings whose unused
/// trailing bits are not zero, so that every byte string has exactly one accepted spelling.
public enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    public static func encode<D: DataProtocol>(_ bytes: D) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// Decodes unpadded base64url; returns nil for anything that is not its canonical spelling.
    public static func decode(_ text: String) -> Data? {
        decode(Substring(text))
    }

    /// Decodes unpadded base64url from a substring; returns nil for anything non-canonical.
    public static func decode(_ text: Substring) -> Data? {
        let utf8 = text.utf8
        guard utf8.count % 4 != 1 else { return nil }
        for byte in utf8 where !isAlphabet(byte) { return nil }
        var standard = String(text).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: standard), encode(data).utf8.elementsEqual(utf8) else { return nil }
        return data
    }

    private static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
