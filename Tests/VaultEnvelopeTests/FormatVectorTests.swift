import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultJSON
@testable import VaultEnvelope

/// `Vectors/format/`: committed blobs with the keys that open them, one per `alg` plus the seed's two forms.
///
/// `WALLETVAULT_WRITE_VECTORS=1 swift test --filter FormatVectorTests` regenerates them (then commit the files);
/// normal runs only read them.
@Suite struct FormatVectorTests {
    static let directory = Bundle.module.resourceURL!.appendingPathComponent("Vectors/format")
    /// The vectors this module writes; every other `NAME.blob.json` in the folder (the Kotlin library's
    /// `kotlin-*` ones) is opened too.
    static let swiftNames = [
        "a256kw", "a256kw-recovery-code", "a256kw-passphrase", "a256gcmkw", "rsa-oaep-256", "ecdh-es+a256kw",
        "wv-ecdh-self+a256gcmkw", "seed-ios", "seed-android",
    ]
    static let names: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let found = files.filter { $0.hasSuffix(".blob.json") }.map { String($0.dropLast(".blob.json".count)) }
        return Array(Set(swiftNames + found)).sorted()
    }()
    static let vaultPlaintext = Data(#"{"items":{"pid-1":{"type":"PID","issuer":"https://issuer.example"}}}"#.utf8)

    /// Builds the key a `.key.json` describes.
    static func key(from description: JSONValue, scratch: URL) throws -> any KeyEncryptionKey {
        let key = try #require(description["key"])
        func bytes(_ name: String) throws -> Data { try #require(key[name]?.stringValue.flatMap(Base64URL.decode)) }
        switch description["kind"]?.stringValue {
        case "file"?:
            let url = scratch.appendingPathComponent(UUID().uuidString)
            try OwnerOnlyFile.create(url, bytes: try bytes("k"))
            return try SymmetricKEK(contentsOf: url)
        case "recovery-code"?:
            return try RecoveryCodeKEK(code: RecoveryCode(parsing: try #require(key["recovery_code"]?.stringValue)))
        case "aes-gcm"?:
            return AESGCMKEK(key: SymmetricKey(data: try bytes("k")), kekID: description["kek_id"]?.stringValue)
        case "rsa"?:
            return RSAKEK(privateKey: try RSA.Encryption.PrivateKey(pemRepresentation: try #require(key["pkcs8_pem"]?.stringValue)))
        case "p256"?:
            return DeviceKEK(privateKey: try P256.KeyAgreement.PrivateKey(rawRepresentation: try bytes("d")))
        case "p256-self"?:
            return SelfECDHKEK(privateKey: try P256.KeyAgreement.PrivateKey(rawRepresentation: try bytes("d")))
        default:
            throw VaultEnvelopeError(.unsupportedAlgorithm, "unknown vector kind")
        }
    }

    @Test(arguments: names) func committedBlobOpensWithItsKey(name: String) async throws {
        let description = try JSONParser().parse(try Data(contentsOf: Self.directory.appendingPathComponent("\(name).key.json")))
        let blob = try Data(contentsOf: Self.directory.appendingPathComponent("\(name).blob.json"))
        let envelope = try VaultEnvelope(parsing: blob)
        let key: any KeyEncryptionKey
        if description["kind"]?.stringValue == "passphrase" {
            key = try PassphraseKEK.unlock(passphrase: try #require(description["key"]?["passphrase"]?.stringValue), in: envelope)
        } else {
            key = try Self.key(from: description, scratch: try TestSupport.scratchDirectory())
        }
        #expect(key.kekID == description["kek_id"]?.stringValue)
        let opened = try await VaultOpener(counterStore: InMemoryCounterStore()).open(envelope, vaultID: "vectors", keys: [key])
        #expect(Base64URL.encode(opened.plaintext) == description["plaintext"]?.stringValue)
        #expect(opened.state.dek.withUnsafeBytes { Base64URL.encode($0) } == description["dek"]?.stringValue)
        #expect(envelope.entries.first?.algorithm?.rawValue == description["alg"]?.stringValue)
        if envelope.form == .extended {
            let aad = try HeaderAuthenticator.additionalData(header: envelope.header)
            #expect(Base64URL.encode(aad) == description["aad"]?.stringValue)
        }
    }

    // MARK: Generator

    @Test(.enabled(if: ProcessInfo.processInfo.environment["WALLETVAULT_WRITE_VECTORS"] == "1"))
    func writeVectors() async throws {
        let output = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/format")
        let sealer = VaultSealer(counterStore: InMemoryCounterStore(), hint: "Vector writer", clock: TestSupport.clock())
        let scratch = try TestSupport.scratchDirectory()

        func write(_ name: String, blob: Data, dek: SymmetricKey, kind: String, keyMembers: [(key: String, value: JSONValue)],
                   kekID: String, alg: String?, aad: Data?) throws {
            var members: [(key: String, value: JSONValue)] = [
                ("kind", .string(kind)), ("alg", alg.map(JSONValue.string) ?? .null), ("kek_id", .string(kekID)),
                ("key", .object(keyMembers)), ("vault_id", .string("vectors")),
                ("plaintext", .string(Base64URL.encode(Self.vaultPlaintext))),
                ("dek", .string(dek.withUnsafeBytes { Base64URL.encode($0) })),
            ]
            if let aad { members.append(("aad", .string(Base64URL.encode(aad)))) }
            try (JSONSerializer.data(of: .object(members)) + Data([0x0A])).write(to: output.appendingPathComponent("\(name).key.json"))
            try (blob + Data([0x0A])).write(to: output.appendingPathComponent("\(name).blob.json"))
        }
        func sealed(_ name: String, _ key: any KeyWrapping, kind: String, keyMembers: [(key: String, value: JSONValue)]) async throws {
            let vault = try await sealer.create(Self.vaultPlaintext, vaultID: name, recipients: [.init(key, label: name)])
            try write(name, blob: vault.blob, dek: vault.state.dek, kind: kind, keyMembers: keyMembers, kekID: key.kekID,
                      alg: key.algorithm.rawValue, aad: try HeaderAuthenticator.additionalData(header: vault.state.envelope.header))
        }
        func b64(_ data: Data) -> JSONValue { .string(Base64URL.encode(data)) }

        let fileKey = SymmetricKey(size: .bits256)
        let fileURL = scratch.appendingPathComponent("a256kw")
        try OwnerOnlyFile.create(fileURL, bytes: fileKey.withUnsafeBytes { Data($0) })
        try await sealed("a256kw", try SymmetricKEK(contentsOf: fileURL), kind: "file",
                         keyMembers: [("kty", .string("oct")), ("k", fileKey.withUnsafeBytes { b64(Data($0)) })])

        let code = RecoveryCode.generate()
        try await sealed("a256kw-recovery-code", try RecoveryCodeKEK(code: code), kind: "recovery-code",
                         keyMembers: [("recovery_code", .string(code.formatted))])

        try await sealed("a256kw-passphrase", try PassphraseKEK(passphrase: "correct horse battery staple", costs: .floor),
                         kind: "passphrase", keyMembers: [("passphrase", .string("correct horse battery staple"))])

        let gcmKey = SymmetricKey(size: .bits256)
        try await sealed("a256gcmkw", AESGCMKEK(key: gcmKey), kind: "aes-gcm",
                         keyMembers: [("kty", .string("oct")), ("k", gcmKey.withUnsafeBytes { b64(Data($0)) })])

        let rsa = try RSA.Encryption.PrivateKey(keySize: 2048)
        try await sealed("rsa-oaep-256", RSAKEK(privateKey: rsa), kind: "rsa", keyMembers: [("pkcs8_pem", .string(rsa.pemRepresentation))])

        func ecMembers(_ key: P256.KeyAgreement.PrivateKey) -> [(key: String, value: JSONValue)] {
            let raw = key.publicKey.rawRepresentation
            return [("kty", .string("EC")), ("crv", .string("P-256")), ("x", b64(raw.prefix(32))), ("y", b64(raw.suffix(32))),
                    ("d", b64(key.rawRepresentation))]
        }
        let device = try P256.KeyAgreement.PrivateKey()
        try await sealed("ecdh-es+a256kw", DeviceKEK(privateKey: device), kind: "p256", keyMembers: ecMembers(device))
        let selfKey = try P256.KeyAgreement.PrivateKey()
        try await sealed("wv-ecdh-self+a256gcmkw", SelfECDHKEK(privateKey: selfKey), kind: "p256-self", keyMembers: ecMembers(selfKey))

        // The seed's forms, built by the same steps SeedCompatibilityTests checks.
        let seedKey = try P256.KeyAgreement.PrivateKey()
        let ios = try SeedCompatibilityTests.iOSSeedBlob(kekPriv: seedKey, plaintext: Self.vaultPlaintext)
        let iosDEK = try await SelfECDHKEK(privateKey: seedKey).unwrap(try VaultEnvelope(parsing: ios.blob).entries[0])
        try write("seed-ios", blob: ios.blob, dek: iosDEK, kind: "p256-self", keyMembers: ecMembers(seedKey),
                  kekID: SelfECDHKEK(privateKey: seedKey).kekID, alg: nil, aad: nil)
        let androidKey = SymmetricKey(size: .bits256)
        let android = try SeedCompatibilityTests.androidSeedBlob(kek: androidKey, plaintext: Self.vaultPlaintext)
        let androidKEK = AESGCMKEK(key: androidKey, kekID: "vault-kek")
        let androidDEK = try await androidKEK.unwrap(try VaultEnvelope(parsing: android.blob).entries[0])
        try write("seed-android", blob: android.blob, dek: androidDEK, kind: "aes-gcm",
                  keyMembers: [("kty", .string("oct")), ("k", androidKey.withUnsafeBytes { b64(Data($0)) })],
                  kekID: "vault-kek", alg: nil, aad: nil)
    }
}
