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
        // jansson cannot represent U+0000 inside a member name; no vault field needs one.
        "y_object_escaped_null_in_key.json": .syntax,
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
}

@Suite struct JSONSerializerTests {
    @Test func roundTripsThroughTheParserKeepingOrder() throws {
        let values: [JSONValue] = [
            .object([("z", .integer(-1)), ("a", .array([.null, .bool(true), .bool(false), .number(1.5)])),
                     ("s", .string("quote \" backslash \\ newline \n nul \u{0} é 😀 </script>")), ("", .object([]))]),
            .array([]), .string(""), .integer(.max), .integer(.min),
        ]
        for value in values {
            let data = JSONSerializer.data(of: value)
            #expect(try JSONParser().parse(data) == value)
        }
        #expect(String(decoding: JSONSerializer.data(of: .object([("b", .integer(1)), ("a", .string("x"))])), as: UTF8.self)
            == #"{"b":1,"a":"x"}"#)
        #expect(String(decoding: JSONSerializer.data(of: .number(.nan)), as: UTF8.self) == "null")
    }
}
