import Foundation
import Testing
import VaultCore
@_spi(Engines) import VaultJSON

/// simdjson reads texts first and yajl decides whatever simdjson refuses; the two must give every text one answer.
@Suite struct JSONEngineAgreementTests {
    /// Texts where the two parsers' own rules differ, or where the walk over simdjson could go wrong.
    static let edgeCases: [String] = [
        "", " ", "{}", "[]", "1", "-0", "0.0", "1E2", "1e-2", "-1.5e+300", "1e400", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "100000000000000000000",
        #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud83d\ude00""#, #""a\u0000b""#, "\"\u{7F}\"",
        "\"a\u{01}b\"", "[1,]", "{\"a\":1,}", "[1 2]", "{} x", "{}}", "[]]", "1 2", "\"x\" \"y\"", "[1]\n\n",
        " \t\r\n{}\r\n", "\u{0B}{}", "{\u{0C}}", "[\"\u{0B}\"]", "nul", "nulll", "[tru]", "[true,false,null]",
        #"{"a":{"b":[{"c":null}]}}"#, #"{"a":1,"a":2}"#, #"{"a":1,"b":{"a":2}}"#, #"{"\u0061":1,"a":2}"#,
        #"{"é":1,"é":2}"#, "[\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"]", "[\"\\x\"]", "[01]", "[1.]", "[.5]", "[+1]",
        "[-]", "[1e]", "[0x10]", "[Infinity]", "[NaN]", "\u{FEFF}{}",
        // simdjson 3.0.1 took one more byte after a root null; yajl took an unclosed string after any value.
        "null", " null \n", "nullx", "nullx\n", "null\\ ", "null\":\"", "[nullx]", "[null]x",
        "{\"v\":1}\"abc", "{}\"", "\"a\"\"", "1\"", "12 \"x", "[1] \"", "true\"", "{} \n\"",
    ]

    static var corpus: [Data] {
        JSONParserTests.corpus.compactMap { try? Data(contentsOf: $0) }
            + edgeCases.map { Data($0.utf8) }
            + [Data([0x22, 0xC0, 0xAF, 0x22]), Data([0x22, 0xED, 0xA0, 0x80, 0x22]), Data([0x22, 0xFF, 0x22])]
    }

    @Test func simdjsonRunsHere() {
        #if arch(x86_64)
            // Every x86-64 CPU since 2013 has AVX2; without it opens fall back to yajl and miss their speed goal.
            #expect(JSONParser.scannerIsAvailable)
        #endif
    }

    @Test func bothEnginesGiveEveryTextTheSameAnswer() {
        var yajl = JSONParser()
        yajl.engine = .yajl
        var compared = 0
        for text in Self.corpus {
            let fast = Result { () throws(JSONParseError) in try JSONParser().parse(text) }
            let slow = Result { () throws(JSONParseError) in try yajl.parse(text) }
            switch (fast, slow) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(Array(text.prefix(40)))")
            case (.failure(let a), .failure(let b)): #expect(a == b, "\(Array(text.prefix(40)))")
            default: Issue.record("engines disagree on \(Array(text.prefix(40))): \(fast) against \(slow)")
            }
            compared += 1
        }
        #expect(compared > 370)
    }

    @Test(arguments: [
        "nullx", "nullx\n", "null\\ ", "null\":\"", "[nullx]", "[null]x", "{\"v\":1}\"abc", "{}\"",
        "\"a\"\"", "1\"", "12 \"x", "[1] \"", "true\"", "{} \n\"",
    ])
    func refusesAnythingButWhitespaceAfterTheValue(text: String) {
        var yajl = JSONParser()
        yajl.engine = .yajl
        for parser in [JSONParser(), yajl] {
            #expect(throws: JSONParseError.self, "\(parser.engine)") { try parser.parse(Data(text.utf8)) }
        }
        #expect(throws: JSONParseError.self) { try JSONParser().parse(Data(text.utf8), decodingBase64URLMember: "cipher") }
    }

    static let extractionCases: [(text: String, decoded: DecodedBase64URLMember?, rest: JSONValue?)] = [
        (#"{"cipher":"AAEC","v":1}"#, .decoded(Data([0, 1, 2])), .object([("v", .integer(1))])),
        (#"{"v":1,"cipher":"AAEC" }"#, .decoded(Data([0, 1, 2])), .object([("v", .integer(1))])),
        (#"{"cipher":"\u0041AEC"}"#, .decoded(Data([0, 1, 2])), .object([])),
        (#"{"cipher":"AAEC\n"}"#, .notBase64URL, .object([])),
        ("{\"cipher\":\"AAEC\n\"}", nil, nil),
        (#"{"cipher":""}"#, .decoded(Data()), .object([])),
        (#"{"cipher":"AA=="}"#, .notBase64URL, .object([])),
        (#"{"cipher":"AA\\EC"}"#, .notBase64URL, .object([])),
        (#"{"cipher":5}"#, nil, .object([("cipher", .integer(5))])),
        (#"{"x":{"cipher":"AAEC"}}"#, nil, .object([("x", .object([("cipher", .string("AAEC"))]))])),
        (#"[{"cipher":"AAEC"}]"#, nil, .array([.object([("cipher", .string("AAEC"))])])),
        (#"{"cipher":"AAEC","cipher":"AAEC"}"#, nil, nil),
        (#"{"cipher":"\ud800AAA"}"#, nil, nil),
        // FuzzShape found simdjson's walk skipping what followed a raw `cipher` unchecked.
        (#"{"v":1,"cipher":"whQL":"P-256","kL"},"label":"x"}"#, nil, nil),
        (#"{"cipher":"AAEC":"B","k":"x"},"l":"y"}"#, nil, nil),
        (#"{"cipher":"AAEC" 1}"#, nil, nil),
    ]

    @Test func bothEnginesExtractTheSameMember() {
        var yajl = JSONParser()
        yajl.engine = .yajl
        for (text, decoded, rest) in Self.extractionCases {
            for parser in [JSONParser(), yajl] {
                let result = Result { () throws(JSONParseError) in
                    try parser.parse(Data(text.utf8), decodingBase64URLMember: "cipher")
                }
                switch result {
                case .success(let parsed):
                    #expect(parsed.decoded == decoded, "\(text) \(parser.engine)")
                    #expect(parsed.value == rest, "\(text) \(parser.engine)")
                case .failure:
                    #expect(rest == nil, "\(text) \(parser.engine) refused")
                }
            }
        }
    }

    /// Texts ending with a base64url `cipher`, read by cutting the string out, and what the cut must give.
    static let trailingCases: [(text: String, cut: Bool)] = [
        (#"{"v":1,"cipher":"AAEC"}"#, true),
        (#"{"cipher":""}"#, true),
        ("{\"v\":[1,{\"a\":null}],\"cipher\":\"AAEC\" \r\n}\n\t ", true),
        (#"{"cipher":"AAE"}"#, true),
        // The guessed cut is wrong or unprovable: each must be read whole.
        (#"{"cipher":"AAEC","v":1}"#, false),
        (#"{"cipher":"AAEC","x":"AAEC"}"#, false),
        (#"{"x\"cipher":"AAEC"}"#, false),
        (#"{"cipher" : "", "x\"cipher":"AAEC"}"#, false),
        (#"{"x":{"cipher":"AAEC"}}"#, false),
        (#"{"x":{"cipher":"AAEC"},"cipher":"AAEC"}"#, false),
        (#"{"cipher":"AAEC","cipher":"AAEC"}"#, false),
        (#"{"cipher":"AA\u0041C"}"#, false),
        (#"{"cipher":"AAF"}"#, false),
        (#"{"x\"cipher":"AAEC","cipher":"AAECAw"}"#, false),
        (#"{"cipher":"AAEC"}}"#, false),
        (#"[{"cipher":"AAEC"}"#, false),
        (#"{"v":01,"cipher":"AAEC"}"#, false),
        (#"{"cipher":"}"#, false),
        ("{\"cipher\":\"AAEC\"\u{0C}}", false),
        (#""cipher":"AAEC"}"#, false),
    ]

    @Test(arguments: trailingCases)
    func cuttingTheTrailingStringReadsWhatTheWholeTextSays(text: String, cut: Bool) {
        var yajl = JSONParser()
        yajl.engine = .yajl
        let bytes = Data(text.utf8)
        let whole = Result { () throws(JSONParseError) in try yajl.parse(bytes, decodingBase64URLMember: "cipher") }
        guard let reading = JSONParser().parseCuttingTrailingString(bytes, member: "cipher") else {
            #expect(!cut, "the cut was refused")
            return
        }
        #expect(cut, "the cut was taken")
        guard case .success(let parsed) = whole else {
            Issue.record("the cut read a text the parser refuses")
            return
        }
        #expect(parsed.value == reading.value)
        #expect(parsed.decoded == .decoded(reading.decoded))
    }

    @Test func extractionOfAVaultSizedMember() throws {
        let bytes = Data((0..<1_000_003).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let text = Data(#"{"v":1,"cipher":""#.utf8) + Data(Base64URL.encode(bytes).utf8) + Data(#""}"#.utf8)
        let parsed = try JSONParser().parse(text, decodingBase64URLMember: "cipher")
        #expect(parsed.decoded == .decoded(bytes))
        #expect(parsed.value == .object([("v", .integer(1))]))
    }
}
