import Foundation

/// Base64url without padding (RFC 4648 §5), strict on input.
///
/// Decoding refuses padding, the `+` and `/` alphabet, whitespace and encodings whose unused
/// trailing bits are not zero, so that every byte string has exactly one accepted spelling.
/// Foundation does the coding; this type only swaps the two alphabet letters and the padding.
public enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    public static func encode<D: DataProtocol>(_ bytes: D) -> String {
        let encoded = Data(bytes).base64EncodedData()
        var padding = 0
        while padding < encoded.count && encoded[encoded.count - 1 - padding] == UInt8(ascii: "=") { padding += 1 }
        return String(unsafeUninitializedCapacity: encoded.count - padding) { output in
            encoded.withUnsafeBytes { input in
                for index in 0..<output.count {
                    let byte = input[index]
                    output[index] = byte == UInt8(ascii: "+") ? UInt8(ascii: "-") : byte == UInt8(ascii: "/") ? UInt8(ascii: "_") : byte
                }
            }
            return output.count
        }
    }

    /// Decodes unpadded base64url; returns nil for anything that is not its canonical spelling.
    public static func decode(_ text: String) -> Data? {
        decode(Substring(text))
    }

    /// Decodes unpadded base64url from a substring; returns nil for anything non-canonical.
    public static func decode(_ text: Substring) -> Data? {
        var text = text
        return text.withUTF8 { input -> Data? in
            let remainder = input.count % 4
            guard remainder != 1 else { return nil }
            let paddedLength = input.count + (4 - remainder) % 4
            var standard = Data(count: paddedLength)
            let valid = standard.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> Bool in
                let output = raw.bindMemory(to: UInt8.self)
                // One table lookup per letter: the standard-alphabet letter, or 0 for anything not base64url.
                var invalid = false
                Self.translation.withUnsafeBufferPointer { table in
                    for index in 0..<input.count {
                        let translated = table[Int(input[index])]
                        invalid = invalid || translated == 0
                        output[index] = translated
                    }
                }
                guard !invalid else { return false }
                for pad in input.count..<paddedLength { output[pad] = UInt8(ascii: "=") }
                // The last letter of a 2- or 3-letter tail carries 4 or 2 unused bits; they must be zero.
                guard remainder != 0, let value = sextet(output[input.count - 1]) else { return true }
                return value & (remainder == 2 ? 0x0F : 0x03) == 0
            }
            return valid ? Data(base64Encoded: standard) : nil
        }
    }

    /// base64url letter → standard-alphabet letter; 0 marks bytes outside the base64url alphabet.
    private static let translation: [UInt8] = (0...255).map { byte -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            UInt8(byte)
        case UInt8(ascii: "-"): UInt8(ascii: "+")
        case UInt8(ascii: "_"): UInt8(ascii: "/")
        default: 0
        }
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
