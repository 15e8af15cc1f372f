// Linux only: the tree builder behind yajl's and simdjson's events.
#if canImport(CYajl)
    import CJSONScan
    import CJansson
    import CYajl
    import Foundation
    import VaultCore

    /// Assembles one document's `JSONValue` from yajl's or simdjson's parse events and adds the rules they lack.
    ///
    /// The parsers check the grammar. This refuses repeated member names and nesting past the limit and, after yajl,
    /// restores the Unicode strictness jansson had: yajl's lexer lets overlong and surrogate UTF-8
    /// forms through, and its escape decoder turns an unpaired `\uD800` into `?` or into an unrelated
    /// code point instead of failing. simdjson refuses all of those itself. One builder serves one parse, so parses
    /// share no state.
    ///
    /// A struct reached through the parser's context pointer rather than a class: a class's stored
    /// properties pay a dynamic exclusivity check on every access, and callbacks come per token.
    struct JSONTreeBuilder {
        private let input: UnsafeRawBufferPointer
        private let maxDepth: Int
        /// The top-level member whose string is decoded from base64url instead of kept, if any.
        private let extractedName: String?
        /// Whether the parser has already refused invalid UTF-8 and unpaired surrogate escapes (simdjson does).
        private let stringsAreChecked: Bool
        /// The yajl parser feeding this builder, set right after yajl_alloc, which needs the builder first; nil
        /// under simdjson, whose events carry no position (its failures are read again by yajl for one).
        var handle: yajl_handle?
        /// Innermost last.
        private var open: [JSONOpenContainer] = []
        /// Where the previous string token ended. Only strings hold quotes, so the next string token
        /// starts at the first quote after this offset.
        private var endOfLastString = 0

        /// The document, once its last token has been read.
        private(set) var root: JSONValue?
        /// Under yajl, the offset just past the document's last token, as yajl counted when it reported it (nil
        /// under simdjson).
        private(set) var rootEnd: Int?
        /// Why a callback stopped the parse.
        private(set) var failure: JSONParseError?
        /// The extracted member's bytes, once it has been read as a string.
        private(set) var extracted: DecodedBase64URLMember?
        /// Whether no top-level member has followed the extracted one (so far, or once the parse is done).
        private(set) var extractedIsLastMember = false

        /// A finished parse: the document, and the extracted member if there was one.
        struct Reading {
            let value: JSONValue
            let extracted: DecodedBase64URLMember?
            let extractedIsLastMember: Bool
        }

        /// The parse's result, once the document's last token has been read.
        var reading: Reading? {
            root.map { Reading(value: $0, extracted: extracted, extractedIsLastMember: extractedIsLastMember) }
        }

        /// Creates a builder for one parse of `input`, which must outlive it, taking the top-level string member
        /// `extracting` (if given) out of the tree and decoding it.
        init(input: UnsafeRawBufferPointer, maxDepth: Int, extracting: String?, stringsAreChecked: Bool) {
            self.input = input
            self.maxDepth = maxDepth
            extractedName = extracting
            self.stringsAreChecked = stringsAreChecked
        }

        /// Bytes of the input read so far: the offset just past the token being reported (0 under simdjson).
        private var position: Int { handle.map { Int(yajl_get_bytes_consumed($0)) } ?? 0 }

        private mutating func fail(_ code: JSONParseError.Code, _ reason: String) -> Bool {
            failure = JSONParseError(code, reason)
            return false
        }

        private mutating func add(_ value: JSONValue) -> Bool {
            guard !open.isEmpty else {
                root = value
                if handle != nil { rootEnd = position }
                return true
            }
            let top = open.count - 1
            if open[top].isObject {
                open[top].members.append((open[top].pendingName, value))
            } else {
                open[top].elements.append(value)
            }
            return true
        }

        private mutating func openContainer(isObject: Bool) -> Bool {
            // Refusing here, as the bracket is read, stops yajl before it reads a hostile document's
            // remaining depth.
            guard open.count < maxDepth else {
                return fail(.tooDeep, "nesting deeper than \(maxDepth) at byte \(position)")
            }
            open.append(JSONOpenContainer(isObject: isObject))
            return true
        }

        private mutating func closeContainer() -> Bool {
            var closed = open.removeLast()
            if open.isEmpty, extracted != nil {
                // The extracted member held a placeholder so that a second member of its name is still refused.
                closed.members.removeAll { $0.key == extractedName }
            }
            return add(closed.isObject ? .object(closed.members) : .array(closed.elements))
        }

        private mutating func number(_ literal: String) -> Bool {
            // yajl has checked the literal against JSON's grammar; Int64(_:) refuses ".", "e" and "E",
            // so only integers that fit become .integer, the rest a Double as jansson's reals were.
            if let integer = Int64(literal) { return add(.integer(integer)) }
            guard let number = Double(literal), number.isFinite else {
                return fail(.syntax, "number out of range before byte \(position)")
            }
            return add(.number(number))
        }

        /// The extracted member's string as written, from simdjson: decoded if it is base64url, else asked for again
        /// unescaped (a base64url text with JSON escapes in it is still base64url once they are decoded).
        private mutating func rawExtractedString(_ written: UnsafeRawBufferPointer) -> Int32 {
            guard decodeExtracted(written) else { return WV_JSON_WANT_UNESCAPED }
            return add(.null) ? 1 : 0
        }

        /// Decodes the extracted member into `extracted`; false, with nothing recorded, when it is not base64url.
        private mutating func decodeExtracted(_ letters: UnsafeRawBufferPointer) -> Bool {
            guard let bytes = Base64URL.decode(letters) else { return false }
            record(.decoded(bytes))
            return true
        }

        private mutating func record(_ member: DecodedBase64URLMember) {
            extracted = member
            extractedIsLastMember = true
        }

        private mutating func string(_ decoded: UnsafeBufferPointer<UInt8>) -> Bool {
            if open.count == 1, open[0].isObject, let extractedName, open[0].pendingName == extractedName {
                if decodeExtracted(UnsafeRawBufferPointer(decoded)) {
                    // text(of:) did not run for this token, so move the start of the next token's search past it
                    // (else a later escaped name would be checked against the wrong bytes and wrongly refused).
                    if !stringsAreChecked { endOfLastString = position }
                } else {
                    // Not base64url is the shape's business, but text that is not even Unicode is still a JSON error.
                    guard text(of: decoded) != nil else { return false }
                    record(.notBase64URL)
                }
                return add(.null)
            }
            guard let text = text(of: decoded) else { return false }
            return add(.string(text))
        }

        private mutating func memberName(_ decoded: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let name = text(of: decoded) else { return false }
            // Names compare as Swift strings, canonically equivalent spellings as equal, as
            // JSONValue's subscript does, so two spellings cannot hide a second value from a lookup.
            guard !open[open.count - 1].hasMember(named: name) else {
                return fail(.duplicateKey, "duplicate member name before byte \(position)")
            }
            open[open.count - 1].pendingName = name
            if open.count == 1 { extractedIsLastMember = false }
            return true
        }

        /// The text of the string token just read, or nil with `failure` set when it is not valid Unicode.
        private mutating func text(of decoded: UnsafeBufferPointer<UInt8>) -> String? {
            if stringsAreChecked { return String(decoding: decoded, as: UTF8.self) }
            let end = position
            defer { endOfLastString = end }
            // A token without escapes reaches us in place; only decoded ones can hide a bad surrogate
            // escape. yajl writes an unpaired high surrogate as "?", or pairs it with whatever escape
            // follows into a four-byte sequence; a lone low surrogate comes out as bytes that fail the
            // UTF-8 check below. Only the first two need jansson's second opinion.
            if !input.encloses(decoded), decoded.contains(where: { $0 == UInt8(ascii: "?") || $0 >= 0xF0 }),
                !janssonAcceptsToken(endingAt: end)
            {
                _ = fail(.syntax, "unpaired surrogate escape in the string before byte \(end)")
                return nil
            }
            // String(validating:) is generic and unspecialized, so costly per call; ASCII needs no checking.
            if decoded.isASCII { return String(decoding: decoded, as: UTF8.self) }
            guard let text = String(validating: decoded, as: UTF8.self) else {
                _ = fail(.syntax, "invalid UTF-8 in the string before byte \(end)")
                return nil
            }
            return text
        }

        /// Whether jansson, whose decoder refuses unpaired surrogates, accepts the raw string token that
        /// ends at `end`; false too when the token cannot be found, so a surprise fails closed.
        private func janssonAcceptsToken(endingAt end: Int) -> Bool {
            guard endOfLastString < end, end <= input.count,
                let start = input[endOfLastString..<end].firstIndex(of: UInt8(ascii: "\""))
            else { return false }
            let token = UnsafeRawBufferPointer(rebasing: input[start..<end])
            var error = json_error_t()
            let flags = size_t(JSON_DECODE_ANY | JSON_ALLOW_NUL)
            guard let node = json_loadb(token.baseAddress?.assumingMemoryBound(to: CChar.self), token.count, flags, &error)
            else { return false }
            json_decref(node)
            return true
        }
    }

    extension JSONTreeBuilder {
        /// The simdjson walk's event table, built from the same functions as yajl's.
        static var scanEvents: wv_json_events {
            wv_json_events(
                null_value: Events.null, boolean: Events.boolean, number: Events.number, string: Events.string,
                start_object: Events.startObject, member_name: Events.memberName, end_object: Events.endContainer,
                start_array: Events.startArray, end_array: Events.endContainer,
                raw_string: { JSONTreeBuilder.from($0).pointee.rawExtractedString(UnsafeRawBufferPointer(start: $1, count: $2)) }
            )
        }

        /// yajl's callback table.
        static var yajlCallbacks: yajl_callbacks {
            yajl_callbacks(
                yajl_null: Events.null, yajl_boolean: Events.boolean,
                // With yajl_number set yajl reports every number as text, never through these two.
                yajl_integer: nil, yajl_double: nil,
                yajl_number: Events.number, yajl_string: Events.string, yajl_start_map: Events.startObject,
                yajl_map_key: Events.memberName, yajl_end_map: Events.endContainer, yajl_start_array: Events.startArray,
                yajl_end_array: Events.endContainer
            )
        }

        /// One C function per event, shared by both parsers' tables. Each reaches its builder through the context
        /// pointer, which keeps concurrent parses apart; returning 0 makes the parser stop at once.
        private enum Events {
            typealias Signal = @convention(c) (UnsafeMutableRawPointer?) -> Int32
            typealias Text = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int) -> Int32

            static let null: Signal = { JSONTreeBuilder.from($0).pointee.add(.null) ? 1 : 0 }
            static let boolean: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = {
                JSONTreeBuilder.from($0).pointee.add(.bool($1 != 0)) ? 1 : 0
            }
            static let number: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int) -> Int32 = { context, text, count in
                let literal = String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self)
                return JSONTreeBuilder.from(context).pointee.number(literal) ? 1 : 0
            }
            static let string: Text = { JSONTreeBuilder.from($0).pointee.string(UnsafeBufferPointer(start: $1, count: $2)) ? 1 : 0 }
            static let memberName: Text = { JSONTreeBuilder.from($0).pointee.memberName(UnsafeBufferPointer(start: $1, count: $2)) ? 1 : 0 }
            static let startObject: Signal = { JSONTreeBuilder.from($0).pointee.openContainer(isObject: true) ? 1 : 0 }
            static let startArray: Signal = { JSONTreeBuilder.from($0).pointee.openContainer(isObject: false) ? 1 : 0 }
            static let endContainer: Signal = { JSONTreeBuilder.from($0).pointee.closeContainer() ? 1 : 0 }
        }

        private static func from(_ context: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<JSONTreeBuilder> {
            context!.assumingMemoryBound(to: JSONTreeBuilder.self)
        }
    }

    extension UnsafeRawBufferPointer {
        /// Whether `bytes` lies inside this buffer, i.e. yajl passed a slice of the input, not its decode buffer.
        fileprivate func encloses(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let base = baseAddress, let start = bytes.baseAddress.map(UnsafeRawPointer.init) else {
                return bytes.isEmpty
            }
            return start >= base && start + bytes.count <= base + count
        }
    }

    extension UnsafeBufferPointer<UInt8> {
        /// Whether every byte is below 0x80. Reads eight bytes at a time without branching on them,
        /// since a vault's ciphertext string runs to megabytes.
        fileprivate var isASCII: Bool {
            guard let base = baseAddress else { return true }
            let raw = UnsafeRawPointer(base)
            var seen: UInt64 = 0
            var offset = 0
            while offset + 8 <= count {
                seen |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            while offset < count {
                seen |= UInt64(base[offset])
                offset += 1
            }
            return seen & 0x8080_8080_8080_8080 == 0
        }
    }
#endif
