import Foundation
import Testing
import VaultCore
import VaultJSON

@Suite struct VaultShapeValidatorTests {
    static let iv = Base64URL.encode(Data(repeating: 1, count: 12))
    static let tag = Base64URL.encode(Data(repeating: 2, count: 16))

    static func blob(_ edit: (inout [String: Any]) -> Void = { _ in }) -> Data {
        var object: [String: Any] = [
            "v": 1,
            "wrappedDeks": [["kek_id": "device-a", "dek_cipher": Base64URL.encode(Data(repeating: 3, count: 40))]],
            "cipher": Base64URL.encode(Data("sealed".utf8)),
            "iv": iv, "tag": tag,
            "updatedUtc": "2026-08-12T19:00:00Z",
            "hint": "iPhone 15 Pro",
        ]
        edit(&object)
        return try! JSONSerialization.data(withJSONObject: object)
    }

    func detail(_ bytes: Data) -> String? {
        do {
            _ = try VaultShapeValidator().validate(try JSONParser().parse(bytes))
            return nil
        } catch let error as VaultShapeError {
            return error.detail
        } catch {
            return "parse: \(error)"
        }
    }

    @Test func acceptsTheSeedExample() throws {
        let header = try VaultShapeValidator().validate(try JSONParser().parse(Self.blob()))
        #expect(header.hint == "iPhone 15 Pro")
        #expect(header.kekIDs == ["device-a"])
        #expect(header.updatedAt == UTCTimestamp(rfc3339: "2026-08-12T19:00:00.000Z"))
        #expect(header.cipherByteCount == 6)
    }

    @Test func keepsUnknownKeysAndAllowsMissingHint() {
        #expect(
            detail(
                Self.blob {
                    $0["extra"] = ["any": 1]
                    $0["hint"] = nil
                }) == nil)
    }

    @Test(arguments: [
        ("v", "v is missing"), ("wrappedDeks", "wrappedDeks is missing"), ("cipher", "cipher is missing"),
        ("iv", "iv is missing"), ("tag", "tag is missing"), ("updatedUtc", "updatedUtc is missing"),
    ])
    func namesAMissingField(field: String, expected: String) {
        #expect(detail(Self.blob { $0[field] = nil }) == expected)
    }

    @Test func refusesWrongTypesAndValues() {
        let cases: [(String, (inout [String: Any]) -> Void)] = [
            ("v must be the integer 1", { $0["v"] = 2 }),
            ("v must be the integer 1", { $0["v"] = "1" }),
            ("v must be the integer 1", { $0["v"] = 1.5 }),
            ("wrappedDeks must be an array", { $0["wrappedDeks"] = "x" }),
            ("wrappedDeks must not be empty", { $0["wrappedDeks"] = [Any]() }),
            ("wrappedDeks[0] must be an object", { $0["wrappedDeks"] = [1] }),
            ("wrappedDeks[0].kek_id must be a non-empty string", { $0["wrappedDeks"] = [["kek_id": "", "dek_cipher": "AA"]] }),
            (
                "wrappedDeks[0].dek_cipher must be unpadded base64url (RFC 4648 §5)",
                { $0["wrappedDeks"] = [["kek_id": "k", "dek_cipher": "AA=="]] }
            ),
            ("wrappedDeks[0].dek_cipher is missing", { $0["wrappedDeks"] = [["kek_id": "k"]] }),
            ("cipher must be unpadded base64url (RFC 4648 §5)", { $0["cipher"] = "ab+/" }),
            ("cipher must be unpadded base64url (RFC 4648 §5)", { $0["cipher"] = "ab cd" }),
            ("cipher must be a string", { $0["cipher"] = 5 }),
            ("iv must decode to exactly 12 bytes, not 11", { $0["iv"] = Base64URL.encode(Data(count: 11)) }),
            ("iv must decode to exactly 12 bytes, not 13", { $0["iv"] = Base64URL.encode(Data(count: 13)) }),
            ("tag must decode to exactly 16 bytes, not 15", { $0["tag"] = Base64URL.encode(Data(count: 15)) }),
            ("tag must decode to exactly 16 bytes, not 17", { $0["tag"] = Base64URL.encode(Data(count: 17)) }),
            ("updatedUtc must be an RFC 3339 timestamp in UTC", { $0["updatedUtc"] = "2026-08-12T19:00:00+02:00" }),
            ("updatedUtc must be an RFC 3339 timestamp in UTC", { $0["updatedUtc"] = "2026-02-30T19:00:00Z" }),
            ("updatedUtc must be an RFC 3339 timestamp in UTC", { $0["updatedUtc"] = 1_700_000_000 }),
            ("hint must be a string", { $0["hint"] = ["x"] }),
            ("hint must have at most 256 characters", { $0["hint"] = String(repeating: "é", count: 257) }),
            // One grapheme cluster, 5001 code points: counted as code points.
            ("hint must have at most 256 characters", { $0["hint"] = "e" + String(repeating: "\u{301}", count: 5000) }),
            // PostgreSQL's text cannot hold it (a 500 on every retry) and SQLite's C string ended there.
            ("hint must not contain U+0000", { $0["hint"] = "a\u{0}b" }),
        ]
        for (expected, edit) in cases {
            #expect(detail(Self.blob(edit)) == expected)
        }
    }

    /// Issue 17 §1: a C-string reader sees `"v\u0000"` as a second `v`, so a NUL in a name is refused at any depth.
    @Test(arguments: [
        (#""x\u0000":1"#, "x\\u0000"),
        (#""cipher\u0000":"AAAA""#, "cipher\\u0000"),
        (#""v\u0000":2"#, "v\\u0000"),
        (#""x":{"a\u0000b":1}"#, "x.a\\u0000b"),
        (#""x":[1,{"y":[{"\u0000":1}]}]"#, "x[1].y[0].\\u0000"),
    ])
    func refusesANULInAMemberNameAtAnyDepth(member: String, path: String) {
        let base = String(decoding: Self.blob(), as: UTF8.self)
        let text = String(base.dropLast()) + "," + member + "}"
        #expect(detail(Data(text.utf8)) == "a member name contains U+0000 (\(path))")
    }

    @Test func capsWrappedDeks() {
        let entry = ["kek_id": "k", "dek_cipher": "AAAA"]
        #expect(detail(Self.blob { $0["wrappedDeks"] = Array(repeating: entry, count: 64) }) == nil)
        #expect(
            detail(Self.blob { $0["wrappedDeks"] = Array(repeating: entry, count: 65) })
                == "wrappedDeks has 65 entries, at most 64 allowed")
    }

    @Test func refusesNonObjects() {
        #expect(detail(Data("[1]".utf8)) == "top level must be an object, not array")
        #expect(detail(Data("null".utf8)) == "top level must be an object, not null")
    }
}
