import Foundation
import Testing
import VaultCore
import VaultJSON

@Suite struct JSONParserTests {
    static let corpus: [URL] = {
        let folder = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/JSONTestSuite/test_parsing")
        return (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil))?
            .filter { $0.pathExtension == "json" }.sorted { $0.lastPathComponent < $1.lastPathComponent } ?? []
    }()

    /// Valid JSON that this service refuses on purpose, and why.
    static let deliberateRefusals: [String: JSONParseError.Code] = [
        // Parsers disagree on which copy of a repeated name wins; a blob must mean one thing.
        "y_object_duplicated_key.json": .duplicateKey,
        "y_object_duplicated_key_and_value.json": .duplicateKey,
    ]

    @Test func corpusIsPresent() {
        #expect(Self.corpus.count == 318)
    }

    @Test(arguments: corpus)
    func conformance(file: URL) throws {
        let bytes = try Data(contentsOf: file)
        let name = file.lastPathComponent
        let result = Result { () throws(JSONParseError) in try JSONParser().parse(bytes) }
        if let deliberate = Self.deliberateRefusals[name] {
            let error = #expect(throws: JSONParseError.self, "\(name) is refused on purpose") { try result.get() }
            #expect(error?.code == deliberate)
        } else if name.hasPrefix("y_") {
            #expect(throws: Never.self, "\(name) must be accepted") { try result.get() }
        } else if name.hasPrefix("n_") {
            #expect(throws: JSONParseError.self, "\(name) must be refused") { try result.get() }
        }
        // Whatever the parser says, the shape validator must answer without crashing.
        if case .success(let value) = result {
            _ = try? VaultShapeValidator().validate(value)
        }
    }

    @Test func duplicateKeysAreTheirOwnError() {
        for text in [#"{"a":1,"a":2}"#, #"{"x":{"k":1,"k":1}}"#, #"[{"v":1,"v":1}]"#] {
            let error = #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(text.utf8)) }
            #expect(error?.code == .duplicateKey)
        }
    }

    @Test func depthLimitIsSixtyFour() throws {
        let atLimit = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try JSONParser().parse(Data(atLimit.utf8))
        let over = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(over.utf8)) }
        let huge = String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(huge.utf8)) }
    }

    @Test func keepsMemberOrderAndTypes() throws {
        let value = try JSONParser().parse(Data(#"{"b":1,"a":[true,null,1.5,"\u0000x"]}"#.utf8))
        #expect(value.keys == ["b", "a"])
        #expect(value["a"] == .array([.bool(true), .null, .number(1.5), .string("\u{0}x")]))
        #expect(value["b"] == .integer(1))
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONParser().parse(Data([0x22, 0xFF, 0x22])) }
        #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(#""\ud800""#.utf8)) }
    }

    /// yajl's lexer lets these UTF-8 forms through; the builder's strict decoding must not.
    @Test(
        arguments: [[0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80]] as [[UInt8]])
    func refusesOverlongSurrogateAndOutOfRangeUTF8(sequence: [UInt8]) {
        for wrapped in [[0x22] + sequence + [0x22], Array(#"{""#.utf8) + sequence + Array(#"":1}"#.utf8)] {
            let error = #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(wrapped)) }
            #expect(error?.code == .syntax)
        }
    }

    /// yajl decodes an unpaired high surrogate to "?" or, before another escape, to an unrelated code point,
    /// and a lone low surrogate to bytes that are not UTF-8.
    @Test(arguments: [
        #""\ud800""#, #""\uDBFFx""#, #""\ud800\u0041""#, #""\ud800\ud800""#, #""\udc00""#, #""a\n\ude00""#,
        #""\ud83d\ude00\ud83d""#, #"{"\ud800":1}"#, #"["?", "\ud800?"]"#, #"{"a":"x\"\\", "b":"\ud800"}"#,
    ])
    func refusesUnpairedSurrogateEscapes(text: String) {
        let error = #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(text.utf8)) }
        #expect(error?.code == .syntax)
    }

    @Test func acceptsPairedSurrogatesAndLookalikes() throws {
        let text = #"["\ud83d\ude00", "\uD834\uDD1E?", "why?\n", "\\ud800", "😀?", {"\u00e9?":"\ud83d\ude00"}, "\u003f", "\"\ud83d\ude00"]"#
        #expect(
            try JSONParser().parse(Data(text.utf8))
                == .array([
                    .string("😀"), .string("𝄞?"), .string("why?\n"), .string("\\ud800"), .string("😀?"),
                    .object([("é?", .string("😀"))]), .string("?"), .string("\"😀"),
                ]))
    }

    /// yajl accepts vertical tab and form feed as whitespace; JSON does not.
    @Test(arguments: [
        "[\u{0B}]", "[\u{0C}]", "[1]\u{0C}", "\u{0B}1", "[1]\u{0}", "\"a\u{0}\"", "1\u{0}", "\u{0}",
        "[1] [2]", "1 2", "[1]x", "/* c */ 1", "[1] // c", "", " ", "[1,]", "{\"a\":1,}", "[01]", "+1", ".5", "1.", "-",
    ])
    func refusesWhatJSONDoesNotAllow(text: String) {
        let error = #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(text.utf8)) }
        #expect(error?.code == .syntax)
    }

    @Test func integersThatFitStayExactOthersBecomeDoubles() throws {
        let text = "[9223372036854775807, -9223372036854775808, -0, 9223372036854775808, 1.0, 1e2, 2E-1, 1e-400, -0.0]"
        let expected: JSONValue = .array([
            .integer(.max), .integer(.min), .integer(0), .number(9_223_372_036_854_775_808), .number(1), .number(100),
            .number(0.2), .number(0), .number(-0.0),
        ])
        #expect(try JSONParser().parse(Data(text.utf8)) == expected)
        for overflow in ["1e400", "[-1e400]", #"{"a":1.8e308}"#] {
            let error = #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(overflow.utf8)) }
            #expect(error?.code == .syntax)
        }
    }

    @Test func stopsAtTheDepthLimitBeforeReadingFurther() {
        // Never closed: only a parser that stops at depth 65 reports depth rather than a premature end.
        let error = #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(String(repeating: "[", count: 100_000).utf8)) }
        #expect(error?.code == .tooDeep)
        #expect(throws: Never.self) { try JSONParser(maxDepth: 1).parse(Data("[1]".utf8)) }
        #expect(throws: JSONParseError.self) { try JSONParser(maxDepth: 1).parse(Data(#"{"a":[]}"#.utf8)) }
        #expect(throws: Never.self) { try JSONParser(maxDepth: 0).parse(Data("1".utf8)) }
    }

    /// JSONValue's subscript compares names as Swift strings, so canonically equivalent spellings are one name.
    @Test func canonicallyEquivalentNamesAreDuplicates() {
        let error = #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(#"{"\u00e9":1,"e\u0301":2}"#.utf8)) }
        #expect(error?.code == .duplicateKey)
        #expect(throws: Never.self) { try JSONParser().parse(Data(#"[{"k":1},{"k":1}]"#.utf8)) }
    }

    @Test func errorsNameAPositionNotTheInput() {
        let error = #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(#"{"secret": tru}"#.utf8)) }
        #expect(error?.reason.contains("byte") == true)
        #expect(error?.reason.contains("secret") == false)
    }

    @Test func parsesConcurrently() async {
        let texts = (0..<64).map { #"{"n":\#($0),"s":"\ud83d\ude00\#($0)","a":[\#($0),{"k":null}]}"# }
        let expected = texts.map { try? JSONParser().parse(Data($0.utf8)) }
        let results = await withTaskGroup(of: (Int, JSONValue?).self) { group in
            for (index, text) in texts.enumerated() {
                group.addTask { (index, try? JSONParser().parse(Data(text.utf8))) }
            }
            var results = [JSONValue?](repeating: nil, count: texts.count)
            for await (index, value) in group { results[index] = value }
            return results
        }
        #expect(results == expected)
        #expect(!expected.contains(nil))
    }
}

@Suite struct JSONSerializerTests {
    @Test func roundTripsThroughTheParserKeepingOrder() throws {
        let values: [JSONValue] = [
            .object([
                ("z", .integer(-1)), ("a", .array([.null, .bool(true), .bool(false), .number(1.5)])),
                ("s", .string("quote \" backslash \\ newline \n nul \u{0} é 😀 </script>")), ("", .object([])),
                ("nul\u{0}in name", .null),
            ]),
            .array([]), .string(""), .integer(.max), .integer(.min),
        ]
        for value in values {
            let data = JSONSerializer.data(of: value)
            #expect(try JSONParser().parse(data) == value)
        }
        #expect(
            String(decoding: JSONSerializer.data(of: .object([("b", .integer(1)), ("a", .string("x"))])), as: UTF8.self)
                == #"{"b":1,"a":"x"}"#)
        #expect(String(decoding: JSONSerializer.data(of: .number(.nan)), as: UTF8.self) == "null")
    }
}
