import Foundation
import Testing
import VaultCore
import VaultJSON

@testable import VaultCrypto
@testable import VaultEnvelope

/// Writes the vectors of FORMAT.md §13's reader rules into `Vectors/format/`: one negative vector per rule of
/// issue 14's attacks 3, 5 and 6, and the positive ones a second implementation most easily gets wrong (a
/// decomposed passphrase, seed entries sharing `vault-kek`, a seed RSA entry with Java's MGF1-SHA1).
///
/// `WALLETVAULT_WRITE_READER_RULE_VECTORS=1 swift test --filter ReaderRuleVectorWriter` regenerates them (then
/// commit the files); `FormatVectorTests` and `crosscheck.py` read them like every other vector.
@Suite struct ReaderRuleVectorWriter {
    typealias Members = FormatVectorWriter.Members
    let vectors = FormatVectorWriter()
    var plaintext: Data { vectors.plaintext }

    func b64(_ data: Data) -> JSONValue { .string(Base64URL.encode(data)) }

    /// A seed-form blob of the vector plaintext under `dek` with the given entries (`kek_id`, `dek_cipher`).
    func seedBlob(dek: SymmetricKey, entries: [(String, Data)]) throws -> Data {
        let vault = try AES.GCM.seal(plaintext, using: dek)
        return JSONSerializer.data(
            of: .object([
                ("v", .integer(1)),
                ("wrappedDeks", .array(entries.map { .object([("kek_id", .string($0.0)), ("dek_cipher", b64($0.1))]) })),
                ("cipher", b64(vault.ciphertext)), ("iv", b64(vault.nonce.withUnsafeBytes { Data($0) })), ("tag", b64(vault.tag)),
                ("updatedUtc", .string("2026-08-12T19:00:00Z")), ("hint", .string("Pixel 8")),
            ]))
    }

    /// An A256KW passphrase entry at `costs`, wrapped with a random key: the reader must refuse its costs before it
    /// derives anything, so no passphrase has to reproduce the key.
    func passphraseEntry(costs: Argon2idCosts) -> ForgedRecipient {
        let key = SymmetricKey(size: .bits256)
        let salt = SecureRandom.bytes(count: 16)
        let kekID = KeyIdentifier.symmetric(key)
        return ForgedRecipient(kekID: kekID, algorithm: .a256kw) { dek in
            WrappedKey(
                kekID: kekID, encryptedKey: try AES.KeyWrap.wrap(dek, using: key),
                scheme: .a256kw(.passphrase(salt: salt, costs: costs)), label: nil, created: nil)
        }
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["WALLETVAULT_WRITE_READER_RULE_VECTORS"] == "1"))
    func writeVectors() async throws {
        let scratch = try TestSupport.scratchDirectory()
        func negative(
            _ name: String, _ blob: Data, _ error: VaultEnvelopeError.Code, kind: String, key: Members, kekID: String,
            alg: String?
        ) throws {
            try vectors.write(
                name, blob: blob, dek: nil, kind: kind, key: key, kekID: kekID, alg: alg,
                extra: [("expect_error", .string(error.rawValue)), ("reader", .object([("counter", .integer(0))]))])
        }

        // Attack 3: costs above the ceiling (the old ceiling's 16 passes and 16 lanes, at a memory a test JVM can
        // still give a reader that derives before checking), and five entries at the floor.
        let heavy = passphraseEntry(costs: Argon2idCosts(memoryKiB: 65536, iterations: 16, parallelism: 16))
        let heavyBlob = try await vectors.sealer().create(plaintext, vaultID: "heavy", recipients: [.init(heavy, label: "Passphrase")])
        try negative(
            "negative-argon2id-above-ceiling", heavyBlob.blob, .weakParameters, kind: "passphrase",
            key: [("passphrase", .string("correct horse battery staple"))], kekID: heavy.kekID, alg: "A256KW")
        var five: [VaultSealer.Recipient] = []
        for index in 0..<5 {
            five.append(.init(try PassphraseKEK(passphrase: "pass \(index)", costs: .floor), label: "Passphrase \(index)"))
        }
        let fiveBlob = try await vectors.sealer().create(plaintext, vaultID: "five", recipients: five)
        try negative(
            "negative-argon2id-five-entries", fiveBlob.blob, .workLimitExceeded, kind: "passphrase",
            key: [("passphrase", .string("pass 4"))], kekID: five[4].key.kekID, alg: "A256KW")

        // Attack 5: an entry whose jwk is another key than its kek_id names; an RSA key below 2048 bits; an epk
        // coordinate of x + p.
        let victim = try P256.KeyAgreement.PrivateKey()
        let attacker = try DeviceKEK.generate()
        let victimKEK = DeviceKEK(privateKey: victim)
        let lying = ForgedRecipient(kekID: victimKEK.kekID, algorithm: .ecdhESA256KW) { dek in
            let real = try await attacker.recipient.wrap(dek)
            return WrappedKey(kekID: victimKEK.kekID, encryptedKey: real.encryptedKey, scheme: real.scheme, label: nil, created: nil)
        }
        let lyingBlob = try await vectors.sealer().create(plaintext, vaultID: "lying", recipients: [.init(lying, label: "Tablet")])
        try negative(
            "negative-jwk-not-kek-id", lyingBlob.blob, .malformed, kind: "p256", key: vectors.ec(victim),
            kekID: victimKEK.kekID, alg: "ECDH-ES+A256KW")

        let outOfField = ForgedRecipient(kekID: victimKEK.kekID, algorithm: .ecdhESA256KW) { dek in
            let real = try await victimKEK.recipient.wrap(dek)
            guard case .ecdhESA256KW(_, let recipient) = real.scheme else { throw VaultEnvelopeError(.cryptoFailure, "unreachable") }
            let epk = PublicJWK.p256(x: EntryKeyCheckTests.pointXPlusP, y: EntryKeyCheckTests.pointY)
            return WrappedKey(
                kekID: victimKEK.kekID, encryptedKey: real.encryptedKey, scheme: .ecdhESA256KW(ephemeral: epk, recipient: recipient),
                label: nil, created: nil)
        }
        let outOfFieldBlob = try await vectors.sealer().create(plaintext, vaultID: "field", recipients: [.init(outOfField, label: "Phone")])
        try negative(
            "negative-epk-coordinate-above-p", outOfFieldBlob.blob, .malformed, kind: "p256", key: vectors.ec(victim),
            kekID: victimKEK.kekID, alg: "ECDH-ES+A256KW")

        let fileKey = SymmetricKey(size: .bits256)
        let fileURL = scratch.appendingPathComponent("kek")
        try OwnerOnlyFile.create(fileURL, bytes: vectors.bytes(fileKey))
        let stored = try SymmetricKEK(contentsOf: fileURL)
        let weak = PublicJWK.rsa(n: EntryKeyCheckTests.modulus1024, e: Data([1, 0, 1]))
        let weakEntry = ForgedRecipient(kekID: weak.thumbprint, algorithm: .rsaOAEP256) { _ in
            WrappedKey(
                kekID: weak.thumbprint, encryptedKey: SecureRandom.bytes(count: 128), scheme: .rsaOAEP256(recipient: weak),
                label: nil, created: nil)
        }
        let weakBlob = try await vectors.sealer().create(
            plaintext, vaultID: "weak", recipients: [.init(stored, label: "Laptop"), .init(weakEntry, label: "Old RSA key")])
        try negative(
            "negative-rsa-1024", weakBlob.blob, .weakParameters, kind: "file", key: vectors.octet(fileKey), kekID: stored.kekID,
            alg: "A256KW")

        // Attack 6: an extended blob with one kek_id twice (the second added after sealing: refused when parsed,
        // before any MAC), and a seed blob whose two Android entries share the seed's constant `vault-kek`.
        let androidKey = SymmetricKey(size: .bits256)
        let android = AESGCMKEK(key: androidKey, kekID: "android-" + Base64URL.encode(SecureRandom.bytes(count: 16)))
        let once = try await vectors.sealer().create(plaintext, vaultID: "twice", recipients: [.init(android, label: "Pixel 8")])
        let twice = try TestSupport.edit(once.blob) { $0["wrappedDeks"] = TestSupport.entries($0) + TestSupport.entries($0) }
        try negative(
            "negative-repeated-kek-id", twice, .malformed, kind: "aes-gcm", key: vectors.octet(androidKey),
            kekID: android.kekID, alg: "A256GCMKW")

        let seedDEK = SymmetricKey(size: .bits256)
        func seedWrap(_ kek: SymmetricKey) throws -> Data {
            let box = try AES.GCM.seal(vectors.bytes(seedDEK), using: kek)
            return box.nonce.withUnsafeBytes { Data($0) } + box.ciphertext + box.tag
        }
        let shared = try seedBlob(
            dek: seedDEK,
            entries: [
                ("vault-kek", try seedWrap(SymmetricKey(size: .bits256))), ("vault-kek", try seedWrap(androidKey)),
            ])
        try vectors.write(
            "seed-android-shared-kek-id", blob: shared, dek: seedDEK, kind: "aes-gcm", key: vectors.octet(androidKey),
            kekID: "vault-kek", alg: nil)

        // The seed's RSA entry as Java's `RSA/ECB/OAEPWithSHA-256AndMGF1Padding` writes it: OAEP-SHA256, MGF1-SHA1.
        let rsa = try RSA.Encryption.PrivateKey(keySize: 2048)
        let rsaKEK = RSAKEK(privateKey: rsa)
        let javaDEK = SymmetricKey(size: .bits256)
        let javaCipher = try rsa.publicKey.encrypt(vectors.bytes(javaDEK), mgf1: .sha1)
        try vectors.write(
            "seed-rsa-oaep-256-mgf1-sha1", blob: try seedBlob(dek: javaDEK, entries: [(rsaKEK.kekID, javaCipher)]),
            dek: javaDEK, kind: "rsa", key: [("pkcs8_pem", .string(rsa.pemRepresentation))], kekID: rsaKEK.kekID, alg: nil)

        // A passphrase given in NFD: enrolled and unlocked through NFC (FORMAT.md §7.3).
        let decomposed = "cafe\u{301} cre\u{300}me bru\u{302}le\u{301}e"
        let nfc = try PassphraseKEK(passphrase: decomposed, costs: .floor)
        let nfcBlob = try await vectors.sealer().create(plaintext, vaultID: "nfc", recipients: [.init(nfc, label: "Passphrase")])
        try vectors.write(
            "anchored-a256kw-passphrase-nfd", blob: nfcBlob.blob, dek: nfcBlob.state.dek, kind: "passphrase",
            key: [("passphrase", .string(decomposed))], kekID: nfc.kekID, alg: "A256KW", envelope: nfcBlob.state.envelope,
            extra: try vectors.outcome(nfcBlob))
    }
}
