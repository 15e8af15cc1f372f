import Foundation
import Testing
import VaultCore
import WalletVaultCLI

/// `walletvault inspect` on good blobs and on each kind the server refuses, through the built binary.
@Suite("walletvault inspect")
struct InspectTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("VaultEnvelopeTests/Vectors/format")

    static func valid(_ changes: [String: Any?] = [:]) -> [String: Any] {
        var blob: [String: Any] = [
            "v": 1,
            "wrappedDeks": [["kek_id": "device-1", "dek_cipher": Base64URL.encode(Data(repeating: 7, count: 40))]],
            "cipher": Base64URL.encode(Data(repeating: 0x5A, count: 32)),
            "iv": Base64URL.encode(Data(repeating: 1, count: 12)),
            "tag": Base64URL.encode(Data(repeating: 2, count: 16)),
            "updatedUtc": "2026-08-12T19:00:00Z",
            "hint": "test device",
        ]
        for (key, value) in changes { blob[key] = value }
        return blob
    }

    static func file(_ bytes: Data) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("inspect-\(UUID().uuidString).json")
        try bytes.write(to: url)
        return url.path
    }

    static func file(_ object: [String: Any]) throws -> String {
        try file(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    @Test(arguments: [
        "a256kw", "a256kw-passphrase", "a256kw-recovery-code", "ecdh-es+a256kw", "rsa-oaep-256", "a256gcmkw",
        "seed-ios", "seed-android", "wv-ecdh-self+a256gcmkw",
    ])
    func formatVectorsAreAcceptedAndShowNoKeyMaterial(_ name: String) throws {
        let path = Self.vectors.appendingPathComponent("\(name).blob.json").path
        let result = try CLIProcess.run(["inspect", path])
        #expect(result.code == 0, "\(result.all)")
        #expect(result.stdout.contains("accepted") && result.stdout.contains("updatedUtc") && result.stdout.contains("entries"))
        // No base64url value of the blob longer than an id appears: wrapped keys, ciphertext, salts, public keys.
        let blob = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        var secrets = [blob["cipher"], blob["tag"], blob["iv"], blob["macs"]].compactMap { $0 as? String }
        for entry in blob["wrappedDeks"] as? [[String: Any]] ?? [] {
            secrets += ["dek_cipher", "salt", "iv", "tag"].compactMap { entry[$0] as? String }
            if let jwk = entry["jwk"] as? [String: Any] { secrets += ["x", "y", "n"].compactMap { jwk[$0] as? String } }
        }
        for secret in secrets where secret.count >= 16 { #expect(!result.all.contains(secret), "printed \(secret.prefix(8))…") }
        if name.hasPrefix("seed") {
            #expect(result.stdout.contains("form        seed"))
        } else {
            #expect(result.stdout.contains("extended"))
        }
    }

    @Test func blobWrittenByTheSDKIsAcceptedWithItsHeader() throws {
        let path = try Self.file(Self.valid())
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try CLIProcess.run(["inspect", path])
        #expect(result.code == 0)
        #expect(result.stdout.contains(#"hint        "test device""#))
        #expect(result.stdout.contains("kek_id device-1") && result.stdout.contains("dek_cipher 40 bytes"))
        #expect(result.stdout.contains("cipher      32 bytes"))
    }

    static let refusals: [(String, @Sendable () throws -> Data, String, String)] = [
        ("not JSON", { Data("{\"v\":1,".utf8) }, "invalid_json", "premature EOF"),
        ("invalid UTF-8", { Data([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) }, "invalid_json", "not valid JSON"),
        ("raw NUL", { Data("{\"v\":1}\u{0}x".utf8) }, "invalid_json", "not valid JSON at byte 8"),
        (
            "too deep", { Data((String(repeating: "[", count: 70) + String(repeating: "]", count: 70)).utf8) }, "invalid_json",
            "nesting deeper than 64"
        ),
        ("duplicate member", { Data(#"{"v":1,"v":1}"#.utf8) }, "invalid_vault_shape", "repeated"),
        ("top-level array", { Data("[]".utf8) }, "invalid_vault_shape", "top level"),
        ("v missing", { try data(valid(["v": nil])) }, "invalid_vault_shape", "v is missing"),
        ("v is 2", { try data(valid(["v": 2])) }, "invalid_vault_shape", "v must be"),
        ("v is a string", { try data(valid(["v": "1"])) }, "invalid_vault_shape", "v must be"),
        ("no wrappedDeks", { try data(valid(["wrappedDeks": nil])) }, "invalid_vault_shape", "wrappedDeks is missing"),
        ("empty wrappedDeks", { try data(valid(["wrappedDeks": [Any]()])) }, "invalid_vault_shape", "must not be empty"),
        (
            "65 entries", { try data(valid(["wrappedDeks": Array(repeating: ["kek_id": "k", "dek_cipher": "AAAA"], count: 65)])) },
            "invalid_vault_shape", "at most 64"
        ),
        ("empty kek_id", { try data(valid(["wrappedDeks": [["kek_id": "", "dek_cipher": "AAAA"]]])) }, "invalid_vault_shape", "kek_id"),
        (
            "padded dek_cipher", { try data(valid(["wrappedDeks": [["kek_id": "k", "dek_cipher": "AA=="]]])) }, "invalid_vault_shape",
            "dek_cipher"
        ),
        ("cipher not base64url", { try data(valid(["cipher": "a+b/"])) }, "invalid_vault_shape", "cipher"),
        ("iv of 11 bytes", { try data(valid(["iv": Base64URL.encode(Data(count: 11))])) }, "invalid_vault_shape", "iv must"),
        ("tag of 15 bytes", { try data(valid(["tag": Base64URL.encode(Data(count: 15))])) }, "invalid_vault_shape", "tag must"),
        ("non-canonical tag bits", { try data(valid(["tag": "AAAAAAAAAAAAAAAAAAAAAB"])) }, "invalid_vault_shape", "tag"),
        ("local-offset updatedUtc", { try data(valid(["updatedUtc": "2026-08-12T21:00:00+02:00"])) }, "invalid_vault_shape", "updatedUtc"),
        ("no updatedUtc", { try data(valid(["updatedUtc": nil])) }, "invalid_vault_shape", "updatedUtc is missing"),
        ("hint too long", { try data(valid(["hint": String(repeating: "h", count: 257)])) }, "invalid_vault_shape", "hint"),
        ("hint a number", { try data(valid(["hint": 5])) }, "invalid_vault_shape", "hint must be a string"),
        (
            "over the size cap", { try data(valid(["cipher": Base64URL.encode(Data(count: 800_000))])) }, "blob_too_large",
            "the limit is 1048576"
        ),
    ]

    static func data(_ object: [String: Any]) throws -> Data { try JSONSerialization.data(withJSONObject: object) }

    @Test(arguments: refusals.indices)
    func eachKindOfBadBlobIsRefusedAsTheServerWould(_ index: Int) throws {
        let (name, make, code, detail) = Self.refusals[index]
        let path = try Self.file(try make())
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try CLIProcess.run(["inspect", path])
        #expect(result.code == 9, "\(name): \(result.all)")
        #expect(result.stdout.isEmpty, "\(name)")
        #expect(result.stderr.contains(code) && result.stderr.contains(detail), "\(name): \(result.stderr)")
        // The same inspector in-process agrees with the binary.
        if case .refused(_, let inProcess, _) = BlobInspector().inspect(try make()).verdict {
            #expect(inProcess == code)
        } else {
            Issue.record("\(name) accepted in-process")
        }
    }

    @Test func aSmallerCapIsHonoured() throws {
        let path = try Self.file(Self.valid())
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try CLIProcess.run(["inspect", path, "--max-bytes", "100"]).code == 9)
        #expect(try CLIProcess.run(["inspect", "/nonexistent/blob.json"]).code == 1)
    }
}
