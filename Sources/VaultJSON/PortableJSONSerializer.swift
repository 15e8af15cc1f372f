import Foundation
import VaultCore

/// Writes a `JSONValue` as compact JSON in Swift alone, byte for byte what `JSONSerializer` (jansson) writes.
///
/// For platforms without jansson (iOS, macOS). The bytes matter, not only the meaning: RFC 7638 thumbprints and
/// the blob layout FORMAT.md documents are computed over the text, so a device must write what the server's code
/// writes. jansson's choices, kept here, with the flags `JSONSerializer` passes (`JSON_COMPACT | JSON_ENCODE_ANY`):
/// members in the order given, and a name given twice (byte for byte; canonically equivalent spellings are different
/// names to jansson) keeps its first place with its last value; in strings only the quote, the backslash and
/// control characters are escaped (`\b \f \n \r \t`, the rest as `\u00XX` in capitals), `/`, DEL and non-ASCII
/// written as they are; integers in decimal; finite doubles as C's `%.17g` with jansson's repairs (`.0` appended to
/// a number that would read as an integer, no `+` or leading zeros in the exponent); NaN and infinities as `null`.
/// Tests and the `FuzzPortableJSON` target hold it to `JSONSerializer` on Linux.
public enum PortableJSONSerializer {
    /// The compact UTF-8 JSON text of `value`. Non-finite numbers, which JSON cannot hold, are written as `null`.
    public static func data(of value: JSONValue) -> Data {
        var output: [UInt8] = []
        // Most texts written are small objects (token claims and headers, answers): one allocation, not several.
        output.reserveCapacity(256)
        write(value, into: &output)
        return Data(output)
    }

    private static func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let flag):
            output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let number):
            output.append(contentsOf: String(number).utf8)
        case .number(let number):
            if number.isFinite {
                output.append(contentsOf: JanssonRealText.text(of: number))
            } else {
                output.append(contentsOf: "null".utf8)
            }
        case .string(let text):
            writeString(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, member) in membersAsJanssonKeepsThem(members).enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Below this many members repeated names are found by comparing each pair; hashing costs more.
    private static let membersBeforeHashing = 16

    /// `members` as a jansson object holds them after setting each in turn: a name set again keeps its first
    /// position and takes the new value. Names compare as bytes, as jansson's hash table compares them.
    private static func membersAsJanssonKeepsThem(
        _ members: [(key: String, value: JSONValue)]
    ) -> [(key: String, value: JSONValue)] {
        guard members.count > 1 else { return members }
        // Names in strictly rising byte order are all different, seen in one pass; the writers of tokens and
        // answers give their members sorted, and comparing every pair of a token's ten claims cost more.
        var rising = true
        for later in 1..<members.count where !members[later - 1].key.utf8.lexicographicallyPrecedes(members[later].key.utf8) {
            rising = false
            break
        }
        if rising { return members }
        if members.count < membersBeforeHashing {
            // Usually every name differs: then the members are kept as given, with no copy.
            var repeats = false
            outer: for later in 1..<members.count {
                let name = members[later].key
                // Equal bytes are equal strings, so `==` (fast on small and ASCII strings) can only rule pairs out.
                for earlier in 0..<later where members[earlier].key == name && members[earlier].key.utf8.elementsEqual(name.utf8) {
                    repeats = true
                    break outer
                }
            }
            guard repeats else { return members }
        }
        var kept: [(key: String, value: JSONValue)] = []
        kept.reserveCapacity(members.count)
        if members.count < membersBeforeHashing {
            for member in members {
                if let earlier = kept.firstIndex(where: { $0.key.utf8.elementsEqual(member.key.utf8) }) {
                    kept[earlier].value = member.value
                } else {
                    kept.append(member)
                }
            }
            return kept
        }
        var positions: [[UInt8]: Int] = [:]
        positions.reserveCapacity(members.count)
        for member in members {
            let name = Array(member.key.utf8)
            if let earlier = positions[name] {
                kept[earlier].value = member.value
            } else {
                positions[name] = kept.count
                kept.append(member)
            }
        }
        return kept
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Writes `text` as a JSON string the way jansson's `dump_string` does without `JSON_ENSURE_ASCII` or
    /// `JSON_ESCAPE_SLASH`.
    private static func writeString(_ text: String, into output: inout [UInt8]) {
        var text = text
        output.append(UInt8(ascii: "\""))
        text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return }
            let count = utf8.count
            var runStart = 0
            var position = 0
            while position < count {
                // Eight bytes at a time while none needs escaping.
                if position + 8 <= count {
                    let word = UInt64(littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
                    let stops = JSONByteClasses.writerStops(in: word)
                    if stops == 0 {
                        position += 8
                        continue
                    }
                    position += stops.trailingZeroBitCount >> 3
                }
                let byte = base[position]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                    position += 1
                    continue
                }
                output.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: position - runStart))
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                default:
                    output.append(contentsOf: [
                        UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                        hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)],
                    ])
                }
                position += 1
                runStart = position
            }
            output.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count - runStart))
        }
        output.append(UInt8(ascii: "\""))
    }
}
