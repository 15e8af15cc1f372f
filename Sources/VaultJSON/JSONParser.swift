// Linux: simdjson and yajl. Elsewhere (Apple platforms) JSONParser+Portable.swift reads with PortableJSONParser.
#if canImport(CYajl)
    import CJSONScan
    import CYajl
    import Foundation
    import VaultCore

    /// Parses untrusted JSON into a `JSONValue`, refusing duplicate member names.
    ///
    /// simdjson (On-Demand, AVX2) reads the text when the CPU allows: a vault's megabyte `cipher` string is what an open
    /// spends its time on, and simdjson scans it about six times as fast as yajl. Whatever simdjson refuses, and every
    /// text on a CPU without AVX2, is read again by yajl, which decides: its answer names the byte where a text went
    /// wrong (simdjson names none) and it reads integers beyond 64 bits as doubles (simdjson refuses them). Both feed
    /// `JSONTreeBuilder`, which adds the rules neither parser has (repeated names, nesting); Foundation's parser would
    /// instead collapse duplicate keys silently.
    public struct JSONParser: Sendable {
        /// Which parser reads a text first; for tests and fuzzers that hold the two to the same answers.
        @_spi(Engines) public enum Engine: Sendable {
            /// simdjson where it runs, yajl for what it refuses.
            case fastest
            /// yajl alone, for tests that hold the two to the same answers.
            case yajl
        }

        /// The deepest nesting of arrays and objects accepted; the top level is depth 1.
        public var maxDepth: Int
        /// Which parser reads a text first.
        @_spi(Engines) public var engine = Engine.fastest

        /// Creates a parser with a nesting limit.
        public init(maxDepth: Int = 64) {
            self.maxDepth = maxDepth
        }

        /// Parses a complete JSON text (any value at the top level).
        ///
        /// - Throws: `JSONParseError` for syntax errors, duplicate member names and nesting past `maxDepth`.
        public func parse(_ bytes: some ContiguousBytes) throws(JSONParseError) -> JSONValue {
            try bytes.withUnsafeBytes { input in
                Result { () throws(JSONParseError) in try parseWhole(input, extracting: nil).value }
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
                Result { () throws(JSONParseError) in
                    if engine == .fastest, let cut = parseCuttingTrailingString(input, member: name) {
                        return (cut.value, .decoded(cut.decoded))
                    }
                    let reading = try parseWhole(input, extracting: name)
                    return (reading.value, reading.extracted)
                }
            }.get()
        }

        /// Reads a text that ends with the top-level member `name` holding a base64url string without handing that
        /// string to the JSON parser; nil when the text does not end so or the parser refuses the rest of it.
        ///
        /// Our writers put a vault's `cipher` last, and scanning its megabytes for JSON structure, where there is none
        /// to find, costs an open half what its AES-GCM does. So the letters from the first `"name":"` to the text's
        /// last quote are cut out and decoded, the decoder refusing any byte outside the base64url alphabet, and the
        /// parser reads what is left, `…"name":""}`. The two readings are the whole text's when the parser finds `name`
        /// as the top-level object's last member holding the empty string: the quote before the letters then opens that
        /// string in the whole text too (the text before it is the same), letters, digits, `-` and `_` hold no quote
        /// or backslash to end it early or escape, and every token after it is the same. Any other outcome gives nil,
        /// and the caller parses the whole text.
        @_spi(Engines) public func parseCuttingTrailingString(
            _ bytes: some ContiguousBytes, member name: String
        ) -> (value: JSONValue, decoded: Data)? {
            bytes.withUnsafeBytes { parseCuttingTrailingString($0, member: name) }
        }

        private func parseCuttingTrailingString(
            _ input: UnsafeRawBufferPointer, member name: String
        ) -> (value: JSONValue, decoded: Data)? {
            guard let base = input.baseAddress?.assumingMemoryBound(to: CChar.self) else { return nil }
            func skippingWhitespace(before end: Int) -> Int {
                var end = end
                while end > 0, Self.isWhitespace(input[end - 1]) { end -= 1 }
                return end
            }
            let brace = skippingWhitespace(before: input.count) - 1
            guard brace > 0, input[brace] == UInt8(ascii: "}") else { return nil }
            let closingQuote = skippingWhitespace(before: brace) - 1
            guard closingQuote > 0, input[closingQuote] == UInt8(ascii: "\"") else { return nil }
            // Only where to cut is guessed here; the decoder and the parser then prove the guess or refuse it.
            let needle = Array("\"\(name)\":\"".utf8)
            let found = needle.withUnsafeBufferPointer { wv_json_find(base, closingQuote, $0.baseAddress, $0.count) }
            guard found >= 0 else { return nil }
            let openingQuote = found + needle.count - 1
            let letters = UnsafeRawBufferPointer(rebasing: input[(openingQuote + 1)..<closingQuote])
            // Texts that end with another, short string (blobs written before `cipher` moved last end with `macs` or
            // `hint`) have that string's opening quote among the last letters: looking there first spares decoding
            // a megabyte to find out.
            guard !letters.suffix(512).contains(UInt8(ascii: "\"")) else { return nil }
            guard let decoded = Base64URL.decode(letters) else { return nil }
            var rest: [UInt8] = []
            rest.reserveCapacity(input.count - letters.count)
            rest.append(contentsOf: input[...openingQuote])
            rest.append(contentsOf: input[closingQuote...])
            guard let reading = rest.withUnsafeBytes({ try? parseWhole($0, extracting: name) }),
                reading.extracted == .decoded(Data()), reading.extractedIsLastMember
            else { return nil }
            return (reading.value, decoded)
        }

        /// The whole text through simdjson, or yajl when simdjson refuses it or cannot run.
        private func parseWhole(
            _ input: UnsafeRawBufferPointer, extracting name: String?
        ) throws(JSONParseError) -> JSONTreeBuilder.Reading {
            if engine == .fastest, let reading = scan(input, extracting: name) { return reading }
            return try parseWithYajl(input, extracting: name)
        }

        /// Whether simdjson runs on this CPU (x86-64 with AVX2); when not, every text is read by yajl.
        @_spi(Engines) public static let scannerIsAvailable: Bool = {
            let probe: StaticString = "{}"
            let status = Self.scan(
                UnsafeRawBufferPointer(start: probe.utf8Start, count: probe.utf8CodeUnitCount),
                maxDepth: 1, extracting: nil
            ).status
            return status != WV_JSON_SCAN_UNAVAILABLE
        }()

        /// simdjson's reading of `input`, or nil when it refused the text, a builder rule stopped it, or it cannot run
        /// on this CPU: yajl then reads the text and gives the answer, error position included.
        private func scan(_ input: UnsafeRawBufferPointer, extracting name: String?) -> JSONTreeBuilder.Reading? {
            let (status, builder) = Self.scan(input, maxDepth: maxDepth, extracting: name)
            guard status == WV_JSON_SCAN_OK else { return nil }
            return builder.reading
        }

        /// Runs the simdjson walk over `input` into a fresh builder.
        private static func scan(
            _ input: UnsafeRawBufferPointer, maxDepth: Int, extracting name: String?
        ) -> (status: wv_json_scan_status, builder: JSONTreeBuilder) {
            var builder = JSONTreeBuilder(input: input, maxDepth: maxDepth, extracting: name, stringsAreChecked: true)
            var events = JSONTreeBuilder.scanEvents
            let status = withUnsafeMutablePointer(to: &builder) { builder in
                withUnsafePointer(to: &events) { events in
                    wv_json_scan(input.baseAddress?.assumingMemoryBound(to: CChar.self), input.count, name, events, builder)
                }
            }
            return (status, builder)
        }

        private func parseWithYajl(
            _ input: UnsafeRawBufferPointer, extracting name: String?
        ) throws(JSONParseError) -> JSONTreeBuilder.Reading {
            // yajl takes vertical tab and form feed for whitespace; JSON does not, and neither may stand
            // raw inside a string, so either byte anywhere refuses the text.
            if let base = input.baseAddress {
                for byte: Int32 in [0x0B, 0x0C] {
                    if let found = memchr(base, byte, input.count) {
                        throw JSONParseError(.syntax, "not valid JSON at byte \(base.distance(to: found)) (control character)")
                    }
                }
            }
            var builder = JSONTreeBuilder(input: input, maxDepth: maxDepth, extracting: name, stringsAreChecked: false)
            var callbacks = JSONTreeBuilder.yajlCallbacks
            // yajl keeps both addresses, so the handle must not outlive these closures.
            return try withUnsafeMutablePointer(to: &builder) { builder throws(JSONParseError) in
                try withUnsafePointer(to: &callbacks) { table throws(JSONParseError) in
                    guard let handle = yajl_alloc(table, nil, builder) else {
                        throw JSONParseError(.syntax, "yajl could not allocate a parser")
                    }
                    defer { yajl_free(handle) }
                    builder.pointee.handle = handle
                    // yajl's defaults are the strict ones: no comments, no trailing garbage, no multiple
                    // values, UTF-8 checked in strings. yajl_config is variadic and Swift cannot call it.
                    var status = yajl_parse(handle, input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count)
                    var position = Int(yajl_get_bytes_consumed(handle))
                    // Where the value ended, if yajl reported it while reading the input; a value reported only on
                    // being told the input ended (a number at the very end) ran to the end of the input.
                    let rootEnd = builder.pointee.rootEnd
                    if status == yajl_status_ok {
                        // A number at the very end is only complete once yajl knows no digit follows.
                        status = yajl_complete_parse(handle)
                        position = input.count
                    }
                    if status == yajl_status_client_canceled, let failure = builder.pointee.failure {
                        throw failure
                    }
                    // yajl takes an unclosed string after the value for a token still arriving, and then for nothing:
                    // `{}"abc` passed. Only JSON whitespace may follow the value.
                    if status == yajl_status_ok, let end = rootEnd,
                        let trailing = input[end...].firstIndex(where: { !Self.isWhitespace($0) })
                    {
                        throw JSONParseError(.syntax, "not valid JSON at byte \(trailing) (trailing garbage)")
                    }
                    guard status == yajl_status_ok, let reading = builder.pointee.reading else {
                        throw JSONParseError(.syntax, "not valid JSON at byte \(position) (\(Self.message(from: handle)))")
                    }
                    return reading
                }
            }
        }

        /// Whether `byte` is JSON whitespace: space, tab, line feed or carriage return.
        private static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        /// yajl's description of its error, without the excerpt of the input its verbose form adds,
        /// since the input may be a secret.
        private static func message(from handle: yajl_handle) -> String {
            guard let text = yajl_get_error(handle, 0, nil, 0) else { return "unknown error" }
            defer { yajl_free_error(handle, text) }
            return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
#endif
