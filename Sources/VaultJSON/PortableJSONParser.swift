import Foundation
import VaultCore

/// Parses untrusted JSON into a `JSONValue` in Swift alone, with the answers `JSONParser` gives.
///
/// For platforms without yajl, simdjson and jansson (iOS, macOS): the SDK may use only the system's frameworks there,
/// and Foundation's `JSONSerialization` silently keeps one of two repeated member names, which FORMAT.md forbids.
/// Every input gets the value or the error code that `JSONParser` gives when yajl reads it, the rules
/// `JSONTreeBuilder` adds included: repeated member names refused (canonically equivalent spellings count as
/// repeats), nesting past `maxDepth` refused as the bracket is read, strict UTF-8 and surrogate escapes, vertical
/// tab and form feed refused anywhere, nothing but whitespace after the value, and integers that fit 64 bits kept
/// exact. Tests and the `FuzzPortableJSON` target hold the two parsers to that on Linux.
///
/// Only the error codes are held to `JSONParser`'s; the reasons name a byte position, not always the one yajl names.
public struct PortableJSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted; the top level is depth 1.
    public var maxDepth: Int

    /// Creates a parser with a nesting limit.
    public init(maxDepth: Int = 64) {
        self.maxDepth = maxDepth
    }

    /// Parses a complete JSON text (any value at the top level).
    ///
    /// - Throws: `JSONParseError` for syntax errors, duplicate member names and nesting past `maxDepth`.
    public func parse(_ bytes: some ContiguousBytes) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBytes { input in
            Result { () throws(JSONParseError) in try read(input, extracting: nil).value }
        }.get()
    }

    /// Parses a complete JSON text, decoding the top-level object's string member `name` from base64url as it is
    /// read rather than keeping its text.
    ///
    /// When the top level is an object with a string member `name`, that member is left out of `value` and its
    /// bytes (or `.notBase64URL`) are in `decoded`; otherwise `decoded` is nil and `value` is what `parse(_:)`
    /// returns.
    /// - Throws: `JSONParseError` as `parse(_:)` does.
    public func parse(
        _ bytes: some ContiguousBytes, decodingBase64URLMember name: String
    ) throws(JSONParseError) -> (value: JSONValue, decoded: DecodedBase64URLMember?) {
        try bytes.withUnsafeBytes { input in
            Result { () throws(JSONParseError) in try read(input, extracting: name) }
        }.get()
    }

    private func read(
        _ input: UnsafeRawBufferPointer, extracting name: String?
    ) throws(JSONParseError) -> (value: JSONValue, decoded: DecodedBase64URLMember?) {
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), !input.isEmpty else {
            throw JSONParseError(.syntax, "not valid JSON at byte 0 (premature end of input)")
        }
        var reader = Reader(bytes: base, count: input.count, maxDepth: maxDepth, extractedName: name)
        do {
            return try reader.readDocument()
        } catch let error where error.code != .syntax {
            // JSONParser refuses a vertical tab or form feed anywhere before yajl reads a byte, so such a text is a
            // syntax error even where a repeated name or the depth would stop a reader first. A text this reader
            // accepts cannot hold either byte: neither is whitespace, and no string may hold a raw control byte.
            if let found = UnsafeBufferPointer(start: base, count: input.count).firstIndex(where: { $0 == 0x0B || $0 == 0x0C }) {
                throw JSONParseError(.syntax, "not valid JSON at byte \(found) (control character)")
            }
            throw error
        }
    }
}

/// One parse: the grammar, read token by token in the order yajl reports its events, so that the first rule broken
/// is the one `JSONParser` reports too.
///
/// Iterative rather than recursive, with the open containers on a stack, so that a large `maxDepth` cannot run the
/// thread out of stack.
private struct Reader {
    /// A string token just read: its decoded bytes are either a slice of the input (no escapes) or `unescaped`.
    private struct StringToken {
        let start: Int
        let end: Int
        let isEscaped: Bool
    }

    private let bytes: UnsafePointer<UInt8>
    private let count: Int
    private let maxDepth: Int
    /// The top-level member whose string is decoded from base64url instead of kept, if any.
    private let extractedName: String?
    private var offset = 0
    /// Innermost last.
    private var open: [JSONOpenContainer] = []
    private var root: JSONValue?
    private var extracted: DecodedBase64URLMember?
    /// The decoded bytes of the last string token that held escapes; reused from token to token.
    private var unescaped: [UInt8] = []

    init(bytes: UnsafePointer<UInt8>, count: Int, maxDepth: Int, extractedName: String?) {
        self.bytes = bytes
        self.count = count
        self.maxDepth = maxDepth
        self.extractedName = extractedName
    }

    // MARK: The grammar

    mutating func readDocument() throws(JSONParseError) -> (value: JSONValue, decoded: DecodedBase64URLMember?) {
        skipWhitespace()
        while true {
            // A value is expected at `offset`.
            if try readValueOrOpen() {
                // A container was opened and left open, its first element or member not yet read; an empty one was
                // closed and counts as a value read.
                continue
            }
            // A value was read: close what it ends, then find where the next value goes.
            while true {
                guard let top = open.indices.last else {
                    skipWhitespace()
                    guard offset == count else { throw syntax("trailing garbage") }
                    // The reader's own flow sets the root before the stack empties.
                    return (root!, extracted)
                }
                skipWhitespace()
                guard offset < count else { throw syntax("premature end of input") }
                let byte = bytes[offset]
                if byte == UInt8(ascii: ",") {
                    offset += 1
                    skipWhitespace()
                    if open[top].isObject { try readMemberName() }
                    break
                }
                guard byte == UInt8(ascii: open[top].isObject ? "}" : "]") else {
                    throw syntax(
                        open[top].isObject ? "expected ',' or '}' after an object member" : "expected ',' or ']' after an array element")
                }
                offset += 1
                closeContainer()
            }
        }
    }

    /// Reads the value at `offset`, or just the opening of an array or object. Returns whether a container was left
    /// open (its first element or member name, with the colon, already read past for objects).
    private mutating func readValueOrOpen() throws(JSONParseError) -> Bool {
        guard offset < count else { throw syntax("premature end of input") }
        switch bytes[offset] {
        case UInt8(ascii: "{"):
            try openContainer(isObject: true)
            skipWhitespace()
            if offset < count, bytes[offset] == UInt8(ascii: "}") {
                offset += 1
                closeContainer()
                return false
            }
            try readMemberName()
            return true
        case UInt8(ascii: "["):
            try openContainer(isObject: false)
            skipWhitespace()
            if offset < count, bytes[offset] == UInt8(ascii: "]") {
                offset += 1
                closeContainer()
                return false
            }
            return true
        case UInt8(ascii: "\""):
            try readStringValue()
        case UInt8(ascii: "t"):
            try readLiteral("true")
            add(.bool(true))
        case UInt8(ascii: "f"):
            try readLiteral("false")
            add(.bool(false))
        case UInt8(ascii: "n"):
            try readLiteral("null")
            add(.null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            add(try readNumber())
        default:
            throw syntax(open.isEmpty ? "not a JSON value" : "unexpected byte where a value belongs")
        }
        return false
    }

    /// Reads a member name, refusing a repeat at once (before its colon, as yajl reports the name), then the
    /// colon and the whitespace up to the value.
    private mutating func readMemberName() throws(JSONParseError) {
        guard offset < count, bytes[offset] == UInt8(ascii: "\"") else {
            throw syntax("expected a member name")
        }
        let token = try readString()
        let name = text(of: token)
        let top = open.count - 1
        guard !open[top].hasMember(named: name) else {
            throw JSONParseError(.duplicateKey, "duplicate member name before byte \(offset)")
        }
        open[top].pendingName = name
        skipWhitespace()
        guard offset < count, bytes[offset] == UInt8(ascii: ":") else { throw syntax("expected ':' after a member name") }
        offset += 1
        skipWhitespace()
    }

    private mutating func readStringValue() throws(JSONParseError) {
        let token = try readString()
        if open.count == 1, open[0].isObject, let extractedName, open[0].pendingName == extractedName {
            // Not base64url is the shape's business; the text is valid Unicode, readString has made sure.
            let decoded = withBytes(of: token) { Base64URL.decode($0) }
            extracted = decoded.map(DecodedBase64URLMember.decoded) ?? .notBase64URL
            // A placeholder, so that a second member of this name is still refused; closing the object drops it.
            add(.null)
            return
        }
        add(.string(text(of: token)))
    }

    private mutating func readLiteral(_ literal: StaticString) throws(JSONParseError) {
        let length = literal.utf8CodeUnitCount
        let start = literal.utf8Start
        for index in 0..<length {
            guard offset + index < count, bytes[offset + index] == start[index] else {
                throw syntax("invalid literal")
            }
        }
        offset += length
    }

    // MARK: Containers

    private mutating func openContainer(isObject: Bool) throws(JSONParseError) {
        // Refusing here, as the bracket is read, stops before a hostile document's remaining depth.
        guard open.count < maxDepth else {
            throw JSONParseError(.tooDeep, "nesting deeper than \(maxDepth) at byte \(offset + 1)")
        }
        offset += 1
        open.append(JSONOpenContainer(isObject: isObject))
    }

    private mutating func closeContainer() {
        var closed = open.removeLast()
        if open.isEmpty, extracted != nil {
            closed.members.removeAll { $0.key == extractedName }
        }
        add(closed.isObject ? .object(closed.members) : .array(closed.elements))
    }

    private mutating func add(_ value: JSONValue) {
        guard let top = open.indices.last else {
            root = value
            return
        }
        if open[top].isObject {
            open[top].members.append((open[top].pendingName, value))
        } else {
            open[top].elements.append(value)
        }
    }

    // MARK: Numbers

    /// Reads a number token, `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, converted as the tree builder converts
    /// yajl's: an integer literal that fits 64 bits is `.integer`, any other finite number `.number`.
    private mutating func readNumber() throws(JSONParseError) -> JSONValue {
        let start = offset
        @inline(__always) func isDigit(_ index: Int) -> Bool {
            index < count && bytes[index] &- UInt8(ascii: "0") < 10
        }
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard isDigit(offset) else { throw syntax("a digit is required in a number") }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
        } else {
            while isDigit(offset) { offset += 1 }
        }
        var isInteger = true
        if offset < count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard isDigit(offset) else { throw syntax("a digit is required after the decimal point") }
            while isDigit(offset) { offset += 1 }
            isInteger = false
        }
        if offset < count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
            offset += 1
            if offset < count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard isDigit(offset) else { throw syntax("a digit is required in the exponent") }
            while isDigit(offset) { offset += 1 }
            isInteger = false
        }
        if isInteger, let integer = exactInteger(from: start, to: offset) { return .integer(integer) }
        // The tree builder's conversion exactly: `Double(_:)` on the literal, refused when not finite.
        let literal = String(decoding: UnsafeBufferPointer(start: bytes + start, count: offset - start), as: UTF8.self)
        guard let number = Double(literal), number.isFinite else {
            throw JSONParseError(.syntax, "number out of range before byte \(offset)")
        }
        return .number(number)
    }

    /// The integer literal `bytes[start..<end]` (grammar already checked) as `Int64(_:)` reads it, or nil when it
    /// does not fit.
    private func exactInteger(from start: Int, to end: Int) -> Int64? {
        let isNegative = bytes[start] == UInt8(ascii: "-")
        var magnitude: UInt64 = 0
        for index in (isNegative ? start + 1 : start)..<end {
            let (shifted, overflowA) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = shifted.addingReportingOverflow(UInt64(bytes[index] &- UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            magnitude = sum
        }
        if isNegative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    // MARK: Strings

    /// Reads the string token whose opening quote is at `offset`, checking what yajl's lexer and the tree builder
    /// check between them: no raw control byte, only JSON's escapes, `\u` with four hex digits, surrogate escapes in
    /// pairs, strict UTF-8. Leaves `offset` past the closing quote.
    private mutating func readString() throws(JSONParseError) -> StringToken {
        offset += 1
        let start = offset
        var position = offset
        // Where the text not yet copied into `unescaped` begins, once an escape has been met.
        var pending = -1
        while true {
            // Plain ASCII text eight bytes at a time: a vault's `cipher` is a megabyte of it.
            while position + 8 <= count {
                let word = UInt64(littleEndian: UnsafeRawPointer(bytes + position).loadUnaligned(as: UInt64.self))
                let stops = JSONByteClasses.readerStops(in: word)
                if stops != 0 {
                    position += stops.trailingZeroBitCount >> 3
                    break
                }
                position += 8
            }
            guard position < count else { throw syntax("unterminated string", at: position) }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                offset = position + 1
                guard pending >= 0 else { return StringToken(start: start, end: position, isEscaped: false) }
                unescaped.append(contentsOf: UnsafeBufferPointer(start: bytes + pending, count: position - pending))
                return StringToken(start: start, end: position, isEscaped: true)
            case UInt8(ascii: "\\"):
                if pending < 0 {
                    unescaped.removeAll(keepingCapacity: true)
                    pending = start
                }
                unescaped.append(contentsOf: UnsafeBufferPointer(start: bytes + pending, count: position - pending))
                position = try readEscape(at: position)
                pending = position
            case 0..<0x20:
                throw syntax("control character in a string", at: position)
            case 0x80...:
                guard let length = JSONByteClasses.utf8SequenceLength(bytes, at: position, end: count) else {
                    throw syntax("invalid UTF-8 in a string", at: position)
                }
                position += length
            default:
                // An ASCII byte the word loop did not reach (the last few of the input).
                position += 1
            }
        }
    }

    /// Decodes the escape whose backslash is at `position` onto `unescaped`; returns the offset past it.
    private mutating func readEscape(at position: Int) throws(JSONParseError) -> Int {
        guard position + 1 < count else { throw syntax("unterminated string", at: position) }
        let simple: UInt8
        switch bytes[position + 1] {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            let unit = try hexUnit(at: position + 2)
            var next = position + 6
            var scalar = unit
            switch unit {
            case 0xD800...0xDBFF:
                // yajl pairs a high surrogate with whatever escape follows, and the tree builder then refuses any
                // pair that is not a high and a low surrogate; a high one alone is refused too.
                guard next + 1 < count, bytes[next] == UInt8(ascii: "\\"), bytes[next + 1] == UInt8(ascii: "u") else {
                    throw syntax("unpaired surrogate escape", at: position)
                }
                let low = try hexUnit(at: next + 2)
                guard (0xDC00...0xDFFF).contains(low) else { throw syntax("unpaired surrogate escape", at: position) }
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                next += 6
            case 0xDC00...0xDFFF:
                throw syntax("unpaired surrogate escape", at: position)
            default:
                break
            }
            appendUTF8(scalar)
            return next
        default:
            throw syntax("invalid escape in a string", at: position)
        }
        unescaped.append(simple)
        return position + 2
    }

    /// The four hex digits at `position`.
    private func hexUnit(at position: Int) throws(JSONParseError) -> UInt32 {
        guard position + 4 <= count else { throw syntax("unterminated string", at: position) }
        var unit: UInt32 = 0
        for index in position..<(position + 4) {
            guard let digit = JSONByteClasses.hexValue(bytes[index]) else {
                throw syntax("invalid \\u escape in a string", at: index)
            }
            unit = unit << 4 | digit
        }
        return unit
    }

    /// Appends the UTF-8 form of a scalar value (never a surrogate) to `unescaped`; U+0000 is one zero byte, as yajl
    /// writes it.
    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            unescaped.append(UInt8(scalar))
        case 0x80..<0x800:
            unescaped.append(UInt8(0xC0 | scalar >> 6))
            unescaped.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            unescaped.append(UInt8(0xE0 | scalar >> 12))
            unescaped.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            unescaped.append(UInt8(0x80 | scalar & 0x3F))
        default:
            unescaped.append(UInt8(0xF0 | scalar >> 18))
            unescaped.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            unescaped.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            unescaped.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Calls `body` with the decoded bytes of `token`.
    private func withBytes<T>(of token: StringToken, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        guard token.isEscaped else {
            return body(UnsafeRawBufferPointer(start: bytes + token.start, count: token.end - token.start))
        }
        return unescaped.withUnsafeBytes(body)
    }

    /// The text of `token`, which `readString` has checked to be well-formed UTF-8.
    private func text(of token: StringToken) -> String {
        withBytes(of: token) { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: Whitespace and errors

    private mutating func skipWhitespace() {
        while offset < count, JSONByteClasses.isWhitespace(bytes[offset]) { offset += 1 }
    }

    private func syntax(_ what: String, at position: Int? = nil) -> JSONParseError {
        JSONParseError(.syntax, "not valid JSON at byte \(position ?? offset) (\(what))")
    }
}
