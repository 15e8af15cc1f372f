import Foundation
import VaultCore

/// The byte encoding of JSON values that the vault's AAD and header MACs are computed over (FORMAT.md §5).
///
/// It is defined on parsed values, not on JSON text, so a server that re-serializes a blob (other member
/// order, other string escapes, other whitespace) changes nothing a reader authenticates.
enum CanonicalEncoding {
    /// Encodes `value`: a type letter, then a length-prefixed or fixed-size payload; object members sorted by
    /// the bytes of their names.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` for a fractional number, which has no canonical spelling.
    static func encode(_ value: JSONValue, into output: inout [UInt8]) throws(VaultEnvelopeError) {
        switch value {
        case .null: output.append(UInt8(ascii: "n"))
        case .bool(let flag): output.append(UInt8(ascii: flag ? "t" : "f"))
        case .integer(let number):
            output.append(UInt8(ascii: "i"))
            appendBigEndian(UInt64(bitPattern: number), byteCount: 8, into: &output)
        case .number:
            throw VaultEnvelopeError(.malformed, "authenticated members must not contain fractional numbers")
        case .string(let text):
            output.append(UInt8(ascii: "s"))
            appendLengthPrefixed(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "a"))
            appendBigEndian(UInt64(elements.count), byteCount: 4, into: &output)
            for element in elements { try encode(element, into: &output) }
        case .object(let members):
            output.append(UInt8(ascii: "o"))
            appendBigEndian(UInt64(members.count), byteCount: 4, into: &output)
            for member in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                appendLengthPrefixed(member.key, into: &output)
                try encode(member.value, into: &output)
            }
        }
    }

    /// Appends `u32be(byte count) ‖ UTF-8 bytes`.
    static func appendLengthPrefixed(_ text: String, into output: inout [UInt8]) {
        appendBigEndian(UInt64(text.utf8.count), byteCount: 4, into: &output)
        output.append(contentsOf: text.utf8)
    }

    /// Appends the low `byteCount` bytes of `value`, most significant first.
    static func appendBigEndian(_ value: UInt64, byteCount: Int, into output: inout [UInt8]) {
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            output.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
