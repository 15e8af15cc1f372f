import Foundation
import VaultCore

/// Writes one compact JSON object member by member, so that a large binary member is base64url-encoded
/// straight into the text.
///
/// Names and ordinary values go through `JSONSerializer` (jansson). A base64url value needs no escaping, its
/// alphabet being letters, digits, `-` and `_`, so its letters are written in place: jansson would copy a
/// megabyte string twice and scan it byte by byte for characters to escape. The text is assembled once, in a
/// buffer of its exact length, when `finish` is called.
public struct JSONObjectWriter {
    private enum Part {
        /// JSON text, copied as is.
        case text(Data)
        /// Bytes to write as a base64url string.
        case base64URL(Data)

        var count: Int {
            switch self {
            case .text(let text): text.count
            case .base64URL(let bytes): Base64URL.encodedCount(ofByteCount: bytes.count) + 2
            }
        }
    }

    private var parts: [Part] = []

    /// Starts an empty object.
    public init() {}

    /// Appends a member whose value jansson writes.
    public mutating func append(_ name: String, _ value: JSONValue) {
        startMember(name)
        parts.append(.text(JSONSerializer.data(of: value)))
    }

    /// Appends a member whose value is the unpadded base64url text of `bytes`.
    public mutating func appendBase64URL(_ name: String, of bytes: Data) {
        startMember(name)
        parts.append(.base64URL(bytes))
    }

    /// The object's text.
    public func finish() -> Data {
        let count = parts.reduce(2) { $0 + $1.count }
        let base = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        var offset = 0
        func write(_ bytes: some ContiguousBytes) {
            bytes.withUnsafeBytes { source in
                (base + offset).copyMemory(from: source.baseAddress ?? UnsafeRawPointer(base), byteCount: source.count)
                offset += source.count
            }
        }
        write([UInt8(ascii: "{")])
        for part in parts {
            switch part {
            case .text(let text):
                write(text)
            case .base64URL(let bytes):
                write([UInt8(ascii: "\"")])
                bytes.withUnsafeBytes { source in
                    let letters = Base64URL.encodedCount(ofByteCount: source.count)
                    Base64URL.encode(source, into: UnsafeMutableRawBufferPointer(start: base + offset, count: letters))
                    offset += letters
                }
                write([UInt8(ascii: "\"")])
            }
        }
        write([UInt8(ascii: "}")])
        precondition(offset == count, "JSONObjectWriter sized its buffer wrongly")
        return Data(bytesNoCopy: base, count: count, deallocator: .custom { memory, _ in memory.deallocate() })
    }

    private mutating func startMember(_ name: String) {
        var separator = parts.isEmpty ? Data() : Data(",".utf8)
        separator.append(JSONSerializer.data(of: .string(name)))
        separator.append(UInt8(ascii: ":"))
        parts.append(.text(separator))
    }
}
