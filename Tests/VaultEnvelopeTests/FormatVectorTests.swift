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

    /// The reader state a `.key.json` asks for (`reader`: `counter` and, optionally, the pinned `anchor`).
    static func readerStore(_ description: JSONValue) async throws -> InMemoryCounterStore {
        let store = InMemoryCounterStore()
        guard let reader = description["reader"] else { return store }
        if let counter = reader["counter"]?.integerValue, counter > 0 { await store.advance("vectors", to: UInt64(counter)) }
        if let anchor = reader["anchor"] { await store.pin(try anchorValue(anchor), for: "vectors") }
        if case .array(let seen)? = reader["seen"] {
            for version in seen {
                let digest = try #require(version["digest"]?.stringValue.flatMap(Base64URL.decode))
                await store.remember(digest, counter: UInt64(try #require(version["counter"]?.integerValue)), for: "vectors")
            }
        }
        return store
    }

    static func anchorValue(_ json: JSONValue) throws -> VaultAnchor {
        VaultAnchor(
            vaultID: try #require(json["vault_id"]?.stringValue), epoch: UInt64(try #require(json["epoch"]?.integerValue)),
            fingerprint: try #require(json["fingerprint"]?.stringValue.flatMap(Base64URL.decode)))
    }

    static func anchorJSON(_ anchor: VaultAnchor) -> JSONValue {
        .object([
            ("vault_id", .string(anchor.vaultID)), ("epoch", .integer(Int64(anchor.epoch))),
            ("fingerprint", .string(Base64URL.encode(anchor.fingerprint))),
        ])
    }

    /// Every vector: a positive one opens (through the confirmation of FORMAT.md §11.4 when it names a
    /// `confirmation_code`) and leaves the reader with the `anchor` and `expect_counter` it names; a negative one
    /// (`expect_error`) is refused with that code and leaves the reader's state as it was.
    @Test(arguments: names) func committedBlobOpensWithItsKey(name: String) async throws {
        let description = try JSONParser().parse(try Data(contentsOf: Self.directory.appendingPathComponent("\(name).key.json")))
        let blob = try Data(contentsOf: Self.directory.appendingPathComponent("\(name).blob.json"))
        let store = try await Self.readerStore(description)
        let opener = VaultOpener(counterStore: store)
        let key: any KeyEncryptionKey
        if description["kind"]?.stringValue == "passphrase" {
            let passphrase = try #require(description["key"]?["passphrase"]?.stringValue)
            do {
                key = try PassphraseKEK.unlock(passphrase: passphrase, in: try VaultEnvelope(parsing: blob))
            } catch {
                let expected = try #require(description["expect_error"]?.stringValue, "\(name): \(error)")
                #expect(error.code.rawValue == expected)
                return
            }
        } else {
            key = try Self.key(from: description, scratch: try TestSupport.scratchDirectory())
        }
        #expect(key.kekID == description["kek_id"]?.stringValue)
        let before = "\(await store.highestCounter(for: "vectors")) \(String(describing: await store.anchor(for: "vectors")))"
        if let expected = description["expect_error"]?.stringValue {
            await #expect(
                performing: {
                    guard let code = description["confirmation_code"]?.stringValue else {
                        return try await opener.open(blob, vaultID: "vectors", keys: [key])
                    }
                    let pending = try await opener.openForConfirmation(blob, vaultID: "vectors", keys: [key])
                    try await opener.confirm(pending, code: code, entryKekID: key.kekID)
                    return pending
                },
                throws: { error in
                    (error as? VaultEnvelopeError)?.code.rawValue == expected
                })
            #expect("\(await store.highestCounter(for: "vectors")) \(String(describing: await store.anchor(for: "vectors")))" == before)
            // A refusal after the unwrap (a public-key entry that proves no writer) still holds the key to its DEK.
            if let dek = description["dek"]?.stringValue {
                let envelope = try VaultEnvelope(parsing: blob)
                let match = try await WrappedKey.unwrapDEK(from: envelope.entries, form: envelope.form, keys: [key])
                #expect(match.dek.withUnsafeBytes { Base64URL.encode($0) } == dek)
            }
            return
        }
        let opened: VaultOpener.OpenedVault
        if let code = description["confirmation_code"]?.stringValue {
            opened = try await opener.openForConfirmation(blob, vaultID: "vectors", keys: [key])
            try await opener.confirm(opened, code: code, entryKekID: key.kekID)
        } else {
            opened = try await opener.open(blob, vaultID: "vectors", keys: [key])
        }
        let envelope = opened.state.envelope
        #expect(Base64URL.encode(opened.plaintext) == description["plaintext"]?.stringValue)
        #expect(opened.state.dek.withUnsafeBytes { Base64URL.encode($0) } == description["dek"]?.stringValue)
        #expect(envelope.entries.first { $0.kekID == key.kekID }?.algorithm?.rawValue == description["alg"]?.stringValue)
        if envelope.form == .extended {
            let aad = try HeaderAuthenticator.additionalData(header: envelope.header)
            #expect(Base64URL.encode(aad) == description["aad"]?.stringValue)
        }
        if let anchor = description["anchor"] {
            #expect(opened.state.identity?.anchor == (try Self.anchorValue(anchor)))
            #expect(await store.anchor(for: "vectors") == (try Self.anchorValue(anchor)))
        }
        if let counter = description["expect_counter"]?.integerValue {
            #expect(await store.highestCounter(for: "vectors") == UInt64(counter))
        }
    }
}
