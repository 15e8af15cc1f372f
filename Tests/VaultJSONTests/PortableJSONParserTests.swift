import Foundation
import Testing
import VaultCore
@_spi(Engines) import VaultJSON

/// PortableJSONParser stands in for JSONParser where yajl does not exist, so it must give every text yajl's answer:
/// the same value, or an error with the same code (the reasons' byte positions may differ).
@Suite struct PortableJSONParserTests {
    static let yajl: JSONParser = {
        var parser = JSONParser()
        parser.engine = .yajl
        return parser
    }()

    /// How the two parsers' answers to `text` differ, nil when they agree, with and without `cipher` decoded while
    /// reading.
    static func disagreement(on text: Data, maxDepth: Int = 64) -> String? {
        var yajl = Self.yajl
        yajl.maxDepth = maxDepth
        let portable = PortableJSONParser(maxDepth: maxDepth)
        let expected = Result { () throws(JSONParseError) in try yajl.parse(text) }
        let actual = Result { () throws(JSONParseError) in try portable.parse(text) }
        switch (expected, actual) {
        case (.success(let a), .success(let b)) where a == b: break
        case (.failure(let a), .failure(let b)) where a.code == b.code: break
        default: return "parse: yajl \(expected), portable \(actual)"
        }
        let expectedExtraction = Result { () throws(JSONParseError) in try yajl.parse(text, decodingBase64URLMember: "cipher") }
        let actualExtraction = Result { () throws(JSONParseError) in try portable.parse(text, decodingBase64URLMember: "cipher") }
        switch (expectedExtraction, actualExtraction) {
        case (.success(let a), .success(let b)) where a.value == b.value && a.decoded == b.decoded: break
        case (.failure(let a), .failure(let b)) where a.code == b.code: break
        default: return "extraction: yajl \(expectedExtraction), portable \(actualExtraction)"
        }
        return nil
    }

    /// Texts that reach each rule and the order in which they are applied.
    static let targetedCases: [String] = [
        // Repeated names at depth, spelled differently, and in objects large enough to be hashed.
        #"{"a":{"b":{"c":1,"c":2}}}"#, #"[[[[[[[[[[{"k":1,"k":1}]]]]]]]]]]"#, #"{"\u0061":1,"a":2}"#, #"{"a":1,"\u0061":2}"#,
        #"{"\u00e9":1,"e\u0301":2}"#, #"{"é":1,"e\u0301":2}"#, #"{"\u212b":1,"\u00c5":2}"#, #"{"a\u0000":1,"a":2}"#,
        #"{"\u0000":1,"\u0000":2}"#, #"[{"k":1},{"k":1}]"#,
        "{" + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","k7":0}"#,
        "{" + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}",
        // Which rule is reported first: the repeated name before later nesting, nesting before a later repeat,
        // and a vertical tab or form feed anywhere over both.
        #"{"a":1,"a":"# + String(repeating: "[", count: 100), String(repeating: "[", count: 65) + #"{"a":1,"a":2}"#,
        #"{"a":1,"a":"\#u{0B}"}"#, #"{"a":1,"a":2,"b":"\#u{0C}"}"#, String(repeating: "[", count: 65) + "\u{0C}",
        #"{"a":1,"a""#, #"{"a":1,"a":"#, #"{"a":1,"a"x"#, #"{"a":1,"a\u"#, #"{"a":1,"\ud800":1,"\ud800":2}"#,
        // Numbers: zero's sign, range, 2^63 and beyond, exponents, fractions.
        "-0", "-0.0", "0e0", "-0e-0", "0.0e+0", "1e400", "-1e400", "1e-400", "1.8e308", "1.7976931348623157e308",
        "4.9e-324", "2.4e-324", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551616", "100000000000000000000",
        String(repeating: "9", count: 308), String(repeating: "9", count: 400), "-" + String(repeating: "1", count: 40),
        "0." + String(repeating: "0", count: 400) + "1", "[1e5,1E5,1e+5,1e-5,1.5,-1.5,10,-10]", "[00]", "[-00]",
        "[0.e1]", "[1.0e]", "[1e+]", "[--1]", "[-a]", "[1e1.5]", "[0x1]", "[1_000]", "-", "0-", "1.", ".1",
        // Surrogate escapes, alone and in pairs, in values and names.
        #""\ud800""#, #""\udc00""#, #""\udbff\udfff""#, #""\uD83D\uDE00""#, #""\ud800\u0041""#, #""\ud800\ud800""#,
        #""\udc00\ud800""#, #""\ud800x""#, #""\ud800\""#, #""\ud800\u""#, #""\ud800\u12""#, #""\ud800\uzzzz""#,
        #"{"\udc00":1}"#, #"["\u003f\ud800"]"#, #"["\n?"]"#, #"["\n😀"]"#, #"{"\n?":1}"#, #""\u0000""#, #""\u00""#,
        #""\uDEAD""#, #""\uD834\uDD1E""#,
        // The byte order mark, NUL, raw control bytes, DEL.
        "\u{FEFF}{}", "\u{FEFF}", "\"\u{FEFF}\"", "{}\u{FEFF}", "\"a\u{0}b\"", "{\"a\u{0}\":1}", #"{"a\u0000b":1}"#,
        "\"\u{1F}\"", "\"\u{7F}\"", "\"\t\"", "\"\n\"", "\u{0}", "[\u{0}]", "1\u{0}",
        // Trailing commas and other punctuation.
        "[1,]", "[,1]", "[,]", "{,}", "{\"a\":1,}", "{\"a\":1,,\"b\":2}", "[1,,2]", "{\"a\" 1}", "{\"a\"::1}", "{1:1}",
        "{\"a\":}", "[1:2]", "{\"a\",1}", "[}", "{]", "[[]", "[]]", "{}}", "]", "}", ",", ":",
        // After the value: only whitespace.
        "{}\"abc", "{}\"", "nullx", "null x", "truex", "false\"", "[nullx]", "[null]x", "1 2", "1\"", "{} {}", "[] ]",
        "\"a\" \"b\"", "{} \n\t\r", "\n\t\r 1 \n\t\r", "{}\u{0B}", "\u{0C}{}", "[1\u{0B}]", "[1 \u{0C},2]",
        // Literals.
        "nul", "nulll", "tru", "True", "NULL", "[true,false,null]", "t", "f", "n", "[nan]", "[inf]", "[-Infinity]",
        // Strings: every escape, bad escapes, unterminated, multi-byte UTF-8 raw.
        #"["\"\\\/\b\f\n\r\t"]"#, #"["\a"]"#, #"["\x41"]"#, #"["\'"]"#, #"["\U0041"]"#, "\"abc", "\"\\", "\"\\u00e",
        "\"é😀中\u{10FFFF}\"", "[\"" + String(repeating: "a", count: 1000) + "\\n" + String(repeating: "b", count: 7) + "\"]",
        // Empty and whitespace-only texts.
        "", " ", "\n", "\t\r\n ",
    ]

    /// Byte strings that are not UTF-8, raw.
    static let byteCases: [[UInt8]] = [
        [0x22, 0xC0, 0x80, 0x22], [0x22, 0xC1, 0xBF, 0x22], [0x22, 0xE0, 0x80, 0x80, 0x22], [0x22, 0xE0, 0x9F, 0xBF, 0x22],
        [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xED, 0xBF, 0xBF, 0x22], [0x22, 0xED, 0x9F, 0xBF, 0x22],
        [0x22, 0xF0, 0x8F, 0xBF, 0xBF, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0x22],
        [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], [0x22, 0xF8, 0x88, 0x80, 0x80, 0x80, 0x22], [0x22, 0xFF, 0x22],
        [0x22, 0xFE, 0x22], [0x22, 0x80, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0xC3, 0xA9, 0x22],
        [0x22, 0xC3], [0x22, 0xF0, 0x9F, 0x98], [0xC3, 0xA9], [0xFF], [0x7B, 0x22, 0xC0, 0xAF, 0x22, 0x3A, 0x31, 0x7D],
        [0xEF, 0xBB, 0xBF, 0x7B, 0x7D], [0xFE, 0xFF, 0x00, 0x7B, 0x00, 0x7D], [0x5B, 0x31, 0x5D, 0x00],
    ]

    static var corpus: [Data] {
        JSONEngineAgreementTests.corpus + targetedCases.map { Data($0.utf8) } + byteCases.map { Data($0) }
            + JSONEngineAgreementTests.extractionCases.map { Data($0.text.utf8) }
            + JSONEngineAgreementTests.trailingCases.map { Data($0.text.utf8) }
    }

    @Test func everyCorpusTextGetsYajlsAnswer() {
        var compared = 0
        for text in Self.corpus {
            if let difference = Self.disagreement(on: text) {
                Issue.record("\(Array(text.prefix(60))): \(difference)")
            }
            compared += 1
        }
        // 318 JSONTestSuite files, the engine agreement edge cases and the cases above.
        #expect(compared > 600)
    }

    @Test(arguments: [0, 1, 2, 3, 63, 64, 65, 1000])
    func nestingLimitsAgree(maxDepth: Int) {
        var texts: [String] = []
        for depth in [0, 1, 2, 3, 4, 63, 64, 65, 66, 999, 1000, 1001] {
            texts.append(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
            texts.append(String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth))
            texts.append(String(repeating: #"[{"a":"#, count: depth) + "1" + String(repeating: "}]", count: depth))
            texts.append(String(repeating: "[", count: depth))
            texts.append(String(repeating: "[", count: depth) + "1," + String(repeating: "]", count: depth))
        }
        for text in texts {
            if let difference = Self.disagreement(on: Data(text.utf8), maxDepth: maxDepth) {
                Issue.record("depth \(maxDepth), \(text.prefix(20))… (\(text.count) bytes): \(difference)")
            }
        }
    }

    @Test func depthSixtyFourIsAcceptedAndSixtyFiveRefusedAtTheBracket() throws {
        let parser = PortableJSONParser()
        let atLimit = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try parser.parse(Data(atLimit.utf8))
        let objects = String(repeating: #"{"a":"#, count: 63) + "[]" + String(repeating: "}", count: 63)
        _ = try parser.parse(Data(objects.utf8))
        for over in [String(repeating: "[", count: 65) + String(repeating: "]", count: 65), String(repeating: "[", count: 100_000)] {
            let error = #expect(throws: JSONParseError.self) { try parser.parse(Data(over.utf8)) }
            #expect(error?.code == .tooDeep)
        }
        #expect(throws: Never.self) { try PortableJSONParser(maxDepth: 0).parse(Data("1".utf8)) }
        #expect(throws: JSONParseError.self) { try PortableJSONParser(maxDepth: 0).parse(Data("[]".utf8)) }
    }

    /// An explicit stack, not recursion: a deep limit does not run the thread out of stack.
    @Test func deepNestingUnderALargeLimitDoesNotRecurse() throws {
        let depth = 20_000
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try PortableJSONParser(maxDepth: depth).parse(Data(text.utf8))
        var measured = 0
        while case .array(let elements) = value {
            measured += 1
            value = elements.first ?? .null
        }
        #expect(measured == depth)
    }

    @Test func refusesRepeatedNamesBeforeLaterErrors() {
        for text in [
            #"{"a":{"b":{"c":1,"c":2}}}"#, #"{"\u00e9":1,"e\u0301":2}"#, #"{"a":1,"a":"# + String(repeating: "[", count: 100),
            #"{"a":1,"a""#, "{" + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","k7":0}"#,
        ] {
            let error = #expect(throws: JSONParseError.self) { try PortableJSONParser().parse(Data(text.utf8)) }
            #expect(error?.code == .duplicateKey, "\(text)")
        }
        // A vertical tab or form feed anywhere makes it a syntax error, as JSONParser checks for them first.
        for text in [#"{"a":1,"a":"\#u{0B}"}"#, String(repeating: "[", count: 65) + "\u{0C}"] {
            let error = #expect(throws: JSONParseError.self) { try PortableJSONParser().parse(Data(text.utf8)) }
            #expect(error?.code == .syntax, "\(text)")
        }
    }

    @Test func numbersBecomeIntegersOnlyWhenExact() throws {
        let text =
            "[-0, -0.0, 9223372036854775807, -9223372036854775808, 9223372036854775808, -9223372036854775809, "
            + "100000000000000000000, 1e-400, 1E2, 0.5]"
        #expect(
            try PortableJSONParser().parse(Data(text.utf8))
                == .array([
                    .integer(0), .number(-0.0), .integer(.max), .integer(.min), .number(0x1p63),
                    .number(-0x1p63), .number(1e20), .number(0), .number(100), .number(0.5),
                ]))
        for overflow in ["1e400", "[-1e400]", #"{"a":1.8e308}"#, String(repeating: "9", count: 400)] {
            let error = #expect(throws: JSONParseError.self) { try PortableJSONParser().parse(Data(overflow.utf8)) }
            #expect(error?.code == .syntax)
        }
    }

    @Test func stringsDecodeEscapesAndKeepNUL() throws {
        let text = #"{"\u0000":"a\u0000b","s":"\"\\\/\b\f\n\r\t","u":"\u00e9\ud83d\ude00\uDBFF\uDFFF","raw":"é😀\#u{7F}"}"#
        #expect(
            try PortableJSONParser().parse(Data(text.utf8))
                == .object([
                    ("\u{0}", .string("a\u{0}b")), ("s", .string("\"\\/\u{8}\u{C}\n\r\t")), ("u", .string("é😀\u{10FFFF}")),
                    ("raw", .string("é😀\u{7F}")),
                ]))
        for bad in [#""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, "\"a\u{0}b\"", "\"\u{1F}\"", #""\x""#, "\u{FEFF}{}"] {
            let error = #expect(throws: JSONParseError.self) { try PortableJSONParser().parse(Data(bad.utf8)) }
            #expect(error?.code == .syntax, "\(bad)")
        }
    }

    @Test func errorsNameAPositionNotTheInput() {
        let error = #expect(throws: JSONParseError.self) { try PortableJSONParser().parse(Data(#"{"secret": tru}"#.utf8)) }
        #expect(error?.reason.contains("byte") == true)
        #expect(error?.reason.contains("secret") == false)
    }

    @Test func extractsTheMemberAsJSONParserDoes() {
        for (text, decoded, rest) in JSONEngineAgreementTests.extractionCases {
            let result = Result { () throws(JSONParseError) in
                try PortableJSONParser().parse(Data(text.utf8), decodingBase64URLMember: "cipher")
            }
            switch result {
            case .success(let parsed):
                #expect(parsed.decoded == decoded, "\(text)")
                #expect(parsed.value == rest, "\(text)")
            case .failure:
                #expect(rest == nil, "\(text) refused")
            }
        }
    }

    /// The member to decode is matched as a Swift string, as the tree builder matches it: a canonically equivalent
    /// spelling is that member.
    @Test(arguments: ["é", "e\u{301}", "", "a\u{0}", "cipher"])
    func extractionByAnyNameAgrees(name: String) {
        let texts = [
            #"{"e\u0301":"AAEC","v":1}"#, #"{"\u00e9":"AAEC"}"#, #"{"é":"AA=="}"#, #"{"":"AAEC","x":[]}"#, #"{"a\u0000":"AAEC"}"#,
            #"{"a":"AAEC"}"#, #"{"cipher":"AAEC","é":5}"#, #"{"é":"AAEC","e\u0301":"AAEC"}"#, #"["é"]"#,
        ]
        for text in texts {
            let bytes = Data(text.utf8)
            let expected = Result { () throws(JSONParseError) in try Self.yajl.parse(bytes, decodingBase64URLMember: name) }
            let actual = Result { () throws(JSONParseError) in try PortableJSONParser().parse(bytes, decodingBase64URLMember: name) }
            switch (expected, actual) {
            case (.success(let a), .success(let b)):
                #expect(a.value == b.value && a.decoded == b.decoded, "\(text) \(name.debugDescription)")
            case (.failure(let a), .failure(let b)): #expect(a.code == b.code, "\(text) \(name.debugDescription)")
            default: Issue.record("\(text) \(name.debugDescription): yajl \(expected), portable \(actual)")
            }
        }
    }

    @Test func extractionOfAVaultSizedMember() throws {
        let bytes = Data((0..<1_000_003).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let letters = Base64URL.encode(bytes)
        for text in [#"{"v":1,"cipher":"\#(letters)"}"#, #"{"cipher":"\#(letters)","v":1}"#] {
            let parsed = try PortableJSONParser().parse(Data(text.utf8), decodingBase64URLMember: "cipher")
            #expect(parsed.decoded == .decoded(bytes))
            #expect(parsed.value == .object([("v", .integer(1))]))
            #expect(Self.disagreement(on: Data(text.utf8)) == nil)
        }
        let kept = try PortableJSONParser().parse(Data(#"{"v":1,"cipher":"\#(letters)"}"#.utf8))
        #expect(kept["cipher"] == .string(letters))
    }

    /// Once wrongly refused on yajl's path (RELIABILITY.md finding 9): after a `cipher` decoded from base64url the tree
    /// builder looked for the next string token's start from the name before `cipher`, so an escaped name decoding
    /// to `?` or a four-byte character was checked against the wrong bytes. All three readings now agree.
    @Test(arguments: [#"{"cipher":"AAEC","a\u003f":1}"#, #"{"cipher":"AAEC","\n?":"x"}"#, "{\"cipher\":\"\",\"\\t\u{1F600}\":1}"])
    func anEscapedNameAfterADecodedMemberReadsAlikeOnEveryPath(text: String) throws {
        let bytes = Data(text.utf8)
        let yajl = try Self.yajl.parse(bytes, decodingBase64URLMember: "cipher")
        let portable = try PortableJSONParser().parse(bytes, decodingBase64URLMember: "cipher")
        let simdjson = try JSONParser().parse(bytes, decodingBase64URLMember: "cipher")
        #expect(yajl.value == portable.value && yajl.decoded == portable.decoded)
        #expect(portable.value == simdjson.value && portable.decoded == simdjson.decoded)
        #expect(try Self.yajl.parse(bytes) == PortableJSONParser().parse(bytes))
    }

    /// The same text refused later for another reason: every path names the repeated `cipher` (yajl's used to say
    /// syntax; FuzzPortableJSON's first run found this form in a mutated format vector).
    @Test func aLaterErrorAfterADecodedMemberIsNamedOnEveryPath() {
        let bytes = Data(#"{"cipher":"AAEC","\ud83d\ude00":1,"cipher":2}"#.utf8)
        let decoding = #expect(throws: JSONParseError.self) { try Self.yajl.parse(bytes, decodingBase64URLMember: "cipher") }
        #expect(decoding?.code == .duplicateKey)
        let whole = #expect(throws: JSONParseError.self) { try Self.yajl.parse(bytes) }
        #expect(whole?.code == .duplicateKey)
        let portable = #expect(throws: JSONParseError.self) { try PortableJSONParser().parse(bytes, decodingBase64URLMember: "cipher") }
        #expect(portable?.code == .duplicateKey)
    }

    /// Texts built from JSON's tokens with a fixed seed, many of them nearly valid: a deterministic sample of what
    /// the fuzz target explores.
    @Test func generatedTextsGetYajlsAnswer() {
        var random = SplitMix64(seed: 0x5EED_4A50_4E00)
        let fragments: [String] = [
            "{", "}", "[", "]", ",", ":", " ", "\n", "\t", "\"", "\"a\"", "\"cipher\"", "\"AAEC\"", "\"\\u00e9\"", "\"e\\u0301\"",
            "\"é\"", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u0000", "\\n", "\\", "?", "😀", "0", "-0", "1", "-", ".5",
            "1e400", "1.5e-3", "9223372036854775808", "-9223372036854775809", "true", "false", "null", "nul", "x",
            "\u{0B}", "\u{0C}", "\u{0}", "\u{7F}", "\u{FEFF}",
        ]
        var disagreements = 0
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<random.next(below: 14) { text += fragments[random.next(below: fragments.count)] }
            let maxDepth = [2, 3, 64][random.next(below: 3)]
            if let difference = Self.disagreement(on: Data(text.utf8), maxDepth: maxDepth) {
                disagreements += 1
                if disagreements <= 10 { Issue.record("\(text.debugDescription) at depth \(maxDepth): \(difference)") }
            }
        }
        #expect(disagreements == 0)
    }
}

/// A small seeded generator, so that generated cases are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `0..<bound`.
    mutating func next(below bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}
