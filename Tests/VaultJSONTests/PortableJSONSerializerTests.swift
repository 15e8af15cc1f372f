import Foundation
import Testing
import VaultCore
import VaultJSON

/// PortableJSONSerializer stands in for JSONSerializer where jansson does not exist; thumbprints and blob layouts are
/// computed over the text, so it must write the same bytes for every value.
@Suite struct PortableJSONSerializerTests {
    static func expectSameText(_ value: JSONValue) {
        #expect(difference(value) == nil)
    }

    /// How the portable text of `value` differs from jansson's, or nil when they are the same bytes.
    static func difference(_ value: JSONValue) -> String? {
        let jansson = JSONSerializer.data(of: value)
        let portable = PortableJSONSerializer.data(of: value)
        guard portable != jansson else { return nil }
        return "\(String(decoding: portable, as: UTF8.self)) against jansson's \(String(decoding: jansson, as: UTF8.self))"
    }

    /// Expects every value to be written as jansson writes it; one expectation for the lot, since the macro's own cost
    /// per call is most of a debug test's time over tens of thousands of values.
    static func expectSameTexts(_ values: some Sequence<JSONValue>) {
        let differences = values.compactMap(difference)
        #expect(differences.isEmpty, "\(differences.count) differ, first: \(differences.prefix(3))")
    }

    /// Doubles where %g changes form or rounding is close: the exponent's bounds (-4 and 17), powers of ten and their
    /// neighbours, the smallest and largest magnitudes, halves, integers near 2^53.
    static var edgeDoubles: [Double] {
        var doubles: [Double] = [
            0, -0.0, 1, -1, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, .pi, -.pi, 0.5, 2.5, 1e16, 1e17, 1.5e17, 9_999_999_999_999_998,
            1e-4, 1e-5, 0.000123456789, 0.00001234, 123456.789, 1e21, 1e22, 1e23, 9_007_199_254_740_992, 9_007_199_254_740_994,
            -9_223_372_036_854_775_808, 18_446_744_073_709_551_616, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
            .leastNormalMagnitude, .leastNormalMagnitude.nextDown, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            .ulpOfOne, 1 + .ulpOfOne, 1 - .ulpOfOne / 2, 100, 1_234_567_890_123_456_768, 0.1 + 0.2, 2.2250738585072014e-308,
        ]
        for exponent in -325...309 {
            for mantissa in ["1", "5", "9.5", "1.25", "9.999999999999999", "4.35"] {
                if let value = Double("\(mantissa)e\(exponent)") { doubles += [value, value.nextUp, value.nextDown] }
            }
        }
        return doubles.filter(\.isFinite)
    }

    @Test func doublesAreWrittenAsJanssonWritesThem() {
        for value in Self.edgeDoubles { Self.expectSameText(.number(value)) }
        #expect(String(decoding: PortableJSONSerializer.data(of: .number(0.1)), as: UTF8.self) == "0.10000000000000001")
        #expect(String(decoding: PortableJSONSerializer.data(of: .number(1e20)), as: UTF8.self) == "1e20")
        #expect(String(decoding: PortableJSONSerializer.data(of: .number(-0.0)), as: UTF8.self) == "-0.0")
        for value in [Double.nan, .infinity, -.infinity, .signalingNaN] {
            Self.expectSameText(.number(value))
            #expect(PortableJSONSerializer.data(of: .number(value)) == Data("null".utf8))
        }
    }

    /// 100 000 doubles of a fixed random sample, in ten slices the test runner can run side by side: every bit
    /// pattern, and integers scaled by 1/3, 1/10 and 1/1000.
    @Test(arguments: 0..<10)
    func randomDoublesAreWrittenAsJanssonWritesThem(slice: UInt64) {
        var random = SplitMix64(seed: 0xD0B1E + slice)
        Self.expectSameTexts(
            (0..<5_000).flatMap { _ in
                [
                    JSONValue.number(Double(bitPattern: random.next())),
                    .number(Double(Int64(bitPattern: random.next()) >> random.next(below: 64)) / [1, 3, 10, 1000][random.next(below: 4)]),
                ]
            })
    }

    @Test func integersAreWrittenAsJanssonWritesThem() {
        for value: Int64 in [0, 1, -1, .max, .min, .max - 1, .min + 1, 9_007_199_254_740_993, -9_007_199_254_740_993] {
            Self.expectSameText(.integer(value))
        }
        var random = SplitMix64(seed: 0x1D)
        Self.expectSameTexts((0..<10_000).map { _ in JSONValue.integer(Int64(bitPattern: random.next()) >> random.next(below: 64)) })
    }

    @Test func stringsAreEscapedAsJanssonEscapesThem() {
        // Every ASCII byte alone, inside a longer run (the eight-byte scan) and at its end.
        for byte in 0..<0x80 {
            let character = String(UnicodeScalar(UInt8(byte)))
            for text in [character, "abcdefghij" + character + "klmnopqrstuvw", "abcdefgh" + character, character + "abcdefghijklmno"] {
                Self.expectSameText(.string(text))
            }
        }
        for text in [
            "", "é", "e\u{301}", "😀", "中文字符", "\u{2028}\u{2029}", "\u{FEFF}", "\u{10FFFF}", "</script>", "a/b",
            String(repeating: "x", count: 10_000) + "\"", "\u{0}\u{0}\u{0}", "tab\tnew\nline\rcr\u{8}\u{C}",
        ] {
            Self.expectSameText(.string(text))
        }
        var random = SplitMix64(seed: 0x57)
        let scalars: [Unicode.Scalar] =
            (0..<0x80).map { Unicode.Scalar(UInt8($0)) } + ["é", "\u{301}", "😀", "\u{2028}", "\u{FFFF}", "\u{10FFFF}", "中", "\u{7F}"]
        for _ in 0..<20_000 {
            var text = String.UnicodeScalarView()
            for _ in 0..<random.next(below: 40) { text.append(scalars[random.next(below: scalars.count)]) }
            Self.expectSameText(.string(String(text)))
        }
    }

    /// A name given twice keeps its first place and its last value in jansson; names compare as bytes there, so
    /// canonically equivalent spellings stay two members.
    @Test func repeatedNamesAreKeptAsJanssonKeepsThem() {
        Self.expectSameText(.object([("a", .integer(1)), ("b", .integer(2)), ("a", .integer(3))]))
        #expect(
            PortableJSONSerializer.data(of: .object([("a", .integer(1)), ("b", .integer(2)), ("a", .integer(3))]))
                == Data(#"{"a":3,"b":2}"#.utf8))
        // Sorted names but for one repeat next to itself: the one-pass check for rising names must not pass them.
        #expect(
            PortableJSONSerializer.data(of: .object([("a", .integer(1)), ("a", .integer(2)), ("b", .integer(3))]))
                == Data(#"{"a":2,"b":3}"#.utf8))
        Self.expectSameText(.object([("a", .integer(1)), ("b", .integer(2)), ("c", .integer(3)), ("c", .integer(4))]))
        Self.expectSameText(.object([("é", .integer(1)), ("e\u{301}", .integer(2)), ("é", .integer(3))]))
        Self.expectSameText(.object((0..<40).map { ("k\($0 % 7)", .integer(Int64($0))) }))
        Self.expectSameText(
            .object(
                (0..<40).map { (String(repeating: "e\u{301}", count: $0 % 3) + String(repeating: "é", count: $0 % 2), .integer(Int64($0))) }
            ))
        Self.expectSameText(.object([("", .null), ("", .bool(true)), ("a\u{0}", .null), ("a", .null)]))
    }

    /// Random documents of every kind of value, nested, with a fixed seed.
    @Test func generatedDocumentsAreWrittenAsJanssonWritesThem() throws {
        var random = SplitMix64(seed: 0xD0C)
        for _ in 0..<3_000 {
            let value = Self.randomValue(depth: 0, using: &random)
            Self.expectSameText(value)
            // And what is written reads back, by both parsers, as the value (where the value has no repeated name
            // or non-finite number, which the text cannot carry).
            let text = PortableJSONSerializer.data(of: value)
            if let back = try? PortableJSONParser().parse(text) {
                #expect(try JSONParser().parse(text) == back)
            }
        }
    }

    static func randomValue(depth: Int, using random: inout SplitMix64) -> JSONValue {
        let names = ["a", "b", "cipher", "é", "e\u{301}", "\u{0}", "\"", "k\n", ""]
        switch random.next(below: depth > 4 ? 6 : 8) {
        case 0: return .null
        case 1: return .bool(random.next(below: 2) == 0)
        case 2: return .integer(Int64(bitPattern: random.next()) >> random.next(below: 64))
        case 3: return .number(random.next(below: 2) == 0 ? Double(bitPattern: random.next()) : Double(random.next(below: 100_000)) / 64)
        case 4, 5:
            let pieces = ["a", "\u{1}", "\u{1F}", "\\", "\"", "/", "é", "😀", "\u{7F}", "\t", "abcdefghijkl", "\u{0}"]
            return .string((0..<random.next(below: 6)).map { _ in pieces[random.next(below: pieces.count)] }.joined())
        case 6: return .array((0..<random.next(below: 5)).map { _ in randomValue(depth: depth + 1, using: &random) })
        default:
            return .object(
                (0..<random.next(below: 20)).map { _ in
                    (names[random.next(below: names.count)], randomValue(depth: depth + 1, using: &random))
                })
        }
    }
}
