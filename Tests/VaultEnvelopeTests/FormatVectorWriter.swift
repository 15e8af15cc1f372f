import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultJSON
import VaultTestSupport

@testable import VaultEnvelope

/// Writes the anchored vectors of `Vectors/format/` (FORMAT.md §11) and one negative vector per attack of issue 14.
///
/// `WALLETVAULT_WRITE_VECTORS=1 swift test --filter FormatVectorWriter` regenerates them (then commit the files);
/// normal runs skip it. The pre-anchor vectors (`a256kw`, …, `seed-android`) were written by the writer before
/// anchors and are kept as they are, so readers prove they still open old blobs.
@Suite struct FormatVectorWriter {
    typealias Members = [(key: String, value: JSONValue)]
    let output = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/format")
    let plaintext = FormatVectorTests.vaultPlaintext

    func b64(_ data: Data) -> JSONValue { .string(Base64URL.encode(data)) }
    func bytes(_ key: SymmetricKey) -> Data { key.withUnsafeBytes { Data($0) } }
    func octet(_ key: SymmetricKey) -> Members { [("kty", .string("oct")), ("k", b64(bytes(key)))] }
    func ec(_ key: P256.KeyAgreement.PrivateKey) -> Members {
        let raw = key.publicKey.rawRepresentation
        return [
            ("kty", .string("EC")), ("crv", .string("P-256")), ("x", b64(raw.prefix(32))), ("y", b64(raw.suffix(32))),
            ("d", b64(key.rawRepresentation)),
        ]
    }

    /// One vector: the blob's text and what a reader needs and must find.
    func write(
        _ name: String, blob: Data, dek: SymmetricKey?, kind: String, key: Members, kekID: String, alg: String?,
        envelope: VaultEnvelope? = nil, extra: Members = []
    ) throws {
        var members: Members = [
            ("kind", .string(kind)), ("alg", alg.map(JSONValue.string) ?? .null), ("kek_id", .string(kekID)),
            ("key", .object(key)), ("vault_id", .string("vectors")),
        ]
        if let dek { members += [("plaintext", b64(plaintext)), ("dek", b64(bytes(dek)))] }
        if let envelope, envelope.form == .extended {
            members.append(("aad", b64(try HeaderAuthenticator.additionalData(header: envelope.header))))
        }
        members += extra
        try (JSONSerializer.data(of: .object(members)) + Data([0x0A])).write(to: output.appendingPathComponent("\(name).key.json"))
        try (blob + Data([0x0A])).write(to: output.appendingPathComponent("\(name).blob.json"))
    }

    func sealer(hint: String? = "Vector writer") -> VaultSealer {
        VaultSealer(counterStore: InMemoryCounterStore(), hint: hint, clock: TestSupport.clock())
    }

    /// What the reader keeps after opening `sealed`, for the `anchor` and `expect_counter` members.
    func outcome(_ sealed: VaultSealer.SealedVault) throws -> Members {
        [
            ("anchor", FormatVectorTests.anchorJSON(try #require(sealed.state.identity).anchor)),
            ("expect_counter", .integer(Int64(sealed.state.counter))),
        ]
    }

    func reader(counter: UInt64, anchor: VaultAnchor?, seen: [(counter: UInt64, digest: Data)] = []) -> Members {
        var state: Members = [("counter", .integer(Int64(counter)))]
        if let anchor { state.append(("anchor", FormatVectorTests.anchorJSON(anchor))) }
        if !seen.isEmpty {
            state.append(("seen", .array(seen.map { .object([("counter", .integer(Int64($0.counter))), ("digest", b64($0.digest))]) })))
        }
        return [("reader", .object(state))]
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["WALLETVAULT_WRITE_VECTORS"] == "1"))
    func writeVectors() async throws {
        let scratch = try TestSupport.scratchDirectory()

        // One anchored blob per alg. Symmetric entries prove their writer, so a reader with nothing pinned accepts
        // them; the P-256 one is opened through the pairing confirmation, the RSA one by a reader that pinned.
        func anchored(
            _ name: String, _ wrapping: any KeyWrapping, kind: String, key: Members, hint: String? = "Vector writer",
            label: String? = nil, confirmWith device: DeviceKEK? = nil, pinned: Bool = false
        ) async throws {
            let sealed = try await sealer(hint: hint).create(plaintext, vaultID: name, recipients: [.init(wrapping, label: label ?? name)])
            var extra = try outcome(sealed)
            if let device {
                // Over the file's bytes, final newline included: what a reader of the file hashes.
                let code = try #require(sealed.state.identity).confirmationCode(
                    forEntry: device.kekID, blobDigest: Data(SHA256.hash(data: sealed.blob + Data([0x0A]))))
                extra.append(("confirmation_code", .string(code)))
            }
            if pinned { extra += reader(counter: 0, anchor: sealed.state.identity?.anchor) }
            try write(
                name, blob: sealed.blob, dek: sealed.state.dek, kind: kind, key: key, kekID: wrapping.kekID,
                alg: wrapping.algorithm.rawValue, envelope: sealed.state.envelope, extra: extra)
        }
        let fileKey = SymmetricKey(size: .bits256)
        let fileURL = scratch.appendingPathComponent("a256kw")
        try OwnerOnlyFile.create(fileURL, bytes: bytes(fileKey))
        let stored = try SymmetricKEK(contentsOf: fileURL)
        try await anchored("anchored-a256kw", stored, kind: "file", key: octet(fileKey))
        let code = RecoveryCode.generate()
        try await anchored(
            "anchored-a256kw-recovery-code", try RecoveryCodeKEK(code: code), kind: "recovery-code",
            key: [("recovery_code", .string(code.formatted))])
        let words = "correct horse battery staple"
        try await anchored(
            "anchored-a256kw-passphrase", try PassphraseKEK(passphrase: words, costs: .floor), kind: "passphrase",
            key: [("passphrase", .string(words))])
        try await anchored(
            "anchored-a256kw-passphrase-default-costs", try PassphraseKEK(passphrase: words), kind: "passphrase",
            key: [("passphrase", .string(words))])
        let gcmKey = SymmetricKey(size: .bits256)
        try await anchored("anchored-a256gcmkw", AESGCMKEK(key: gcmKey), kind: "aes-gcm", key: octet(gcmKey))
        let appNamed = "android-" + Base64URL.encode(SecureRandom.bytes(count: 16))
        try await anchored("anchored-a256gcmkw-app-named", AESGCMKEK(key: gcmKey, kekID: appNamed), kind: "aes-gcm", key: octet(gcmKey))
        let rsa = try RSA.Encryption.PrivateKey(keySize: 2048)
        try await anchored(
            "anchored-rsa-oaep-256", RSAKEK(privateKey: rsa), kind: "rsa", key: [("pkcs8_pem", .string(rsa.pemRepresentation))],
            pinned: true)
        let deviceKey = try P256.KeyAgreement.PrivateKey()
        let device = DeviceKEK(privateKey: deviceKey)
        try await anchored("anchored-ecdh-es+a256kw", device, kind: "p256", key: ec(deviceKey), confirmWith: device)
        let selfKey = try P256.KeyAgreement.PrivateKey()
        try await anchored("anchored-wv-ecdh-self+a256gcmkw", SelfECDHKEK(privateKey: selfKey), kind: "p256-self", key: ec(selfKey))
        try await anchored("anchored-no-hint", stored, kind: "file", key: octet(fileKey), hint: nil)

        // Several kinds in one blob, with text outside ASCII in the hint and labels (code points, not bytes, count).
        let several = try await sealer(hint: "Téléphone de Zoë 📱").create(
            plaintext, vaultID: "several",
            recipients: [
                .init(device, label: "Pixel 9 — Zoë"), .init(try RecoveryCodeKEK(code: code), label: "Code de récupération"),
                .init(try PassphraseKEK(passphrase: words, costs: .floor), label: "Phrase secrète"),
                .init(AESGCMKEK(key: gcmKey, kekID: appNamed), label: "Ordinateur ✓"), .init(RSAKEK(privateKey: rsa), label: "Clé RSA"),
            ])
        try write(
            "anchored-several-entries", blob: several.blob, dek: several.state.dek, kind: "aes-gcm", key: octet(gcmKey),
            kekID: appNamed, alg: "A256GCMKW", envelope: several.state.envelope, extra: try outcome(several))

        // A vault whose secret was rotated twice: epoch 3, three secrets carried, its entry bound to epoch 3 (§11.9), so
        // a reader with nothing pinned takes it. (`anchored-epoch-3`, the earlier writer's, has an unbound entry and a
        // reader that pinned epoch 1; it is kept as written.)
        let first = try await sealer().create(plaintext, vaultID: "epochs", recipients: [.init(stored, label: "file")])
        var rotated = first
        for _ in 0..<2 { rotated = try await sealer().rotateDEK(plaintext, over: rotated.state, keys: [stored], rotatingVaultSecret: true) }
        try write(
            "anchored-bound-epoch-3", blob: rotated.blob, dek: rotated.state.dek, kind: "file", key: octet(fileKey), kekID: stored.kekID,
            alg: "A256KW", envelope: rotated.state.envelope, extra: try outcome(rotated) + reader(counter: 0, anchor: nil))

        // The seed's form with the two wraps its §1 also allows: an A256KW stored key and RSA-OAEP-256.
        for (name, wrapping, kind, key) in [
            ("seed-a256kw", stored as any KeyWrapping, "file", octet(fileKey)),
            ("seed-rsa-oaep-256", RSAKEK(privateKey: rsa), "rsa", [("pkcs8_pem", JSONValue.string(rsa.pemRepresentation))]),
        ] as [(String, any KeyWrapping, String, Members)] {
            let dek = SymmetricKey(size: .bits256)
            let vault = try AES.GCM.seal(plaintext, using: dek)
            let entry = try await wrapping.wrap(dek)
            let blob = JSONSerializer.data(
                of: .object([
                    ("v", .integer(1)),
                    ("wrappedDeks", .array([.object([("kek_id", .string(entry.kekID)), ("dek_cipher", b64(entry.encryptedKey))])])),
                    ("cipher", b64(vault.ciphertext)), ("iv", b64(vault.nonce.withUnsafeBytes { Data($0) })), ("tag", b64(vault.tag)),
                    ("updatedUtc", .string("2026-08-12T19:00:00Z")),
                ]))
            try write(name, blob: blob, dek: dek, kind: kind, key: key, kekID: wrapping.kekID, alg: nil)
        }

        // Negative vectors: the blob, the key, the reader's state, and the error it must give without changing it.
        let genuine = try await sealer().create(plaintext, vaultID: "genuine", recipients: [.init(device, label: "Phone")])
        let genuineAnchor = try #require(genuine.state.identity).anchor
        func forged(namingVault vaultID: String) async throws -> Data {
            try await WriterAuthenticationTests.forgedAnchoredBlob(for: device.recipient, namingVault: vaultID)
        }
        func negative(_ name: String, _ blob: Data, _ error: VaultEnvelopeError.Code, reader state: Members) throws {
            try write(
                name, blob: blob, dek: nil, kind: "p256", key: ec(deviceKey), kekID: device.kekID, alg: "ECDH-ES+A256KW",
                extra: [("expect_error", .string(error.rawValue))] + state)
        }
        try negative(
            "negative-forged-public-key", try await forged(namingVault: genuineAnchor.vaultID), .writerNotMember,
            reader: reader(counter: 1, anchor: genuineAnchor))
        try negative(
            "negative-forged-unpinned", try await forged(namingVault: genuineAnchor.vaultID), .unconfirmedVault,
            reader: reader(counter: 0, anchor: nil))
        let otherVault = try await sealer().create(plaintext, vaultID: "other", recipients: [.init(device, label: "Phone")])
        try negative("negative-cross-served", otherVault.blob, .wrongVault, reader: reader(counter: 1, anchor: genuineAnchor))
        let dek = SymmetricKey(size: .bits256)
        let preAnchor = try PreAnchorBlob.seal(plaintext, dek: dek, entries: [try await PreAnchorBlob.entry(device, dek: dek)], counter: 9)
        try negative("negative-downgrade-pre-anchor", preAnchor, .downgrade, reader: reader(counter: 1, anchor: genuineAnchor))
        let seed = try SeedCompatibilityTests.iOSSeedBlob(kekPriv: selfKey, plaintext: plaintext)
        try write(
            "negative-downgrade-seed", blob: seed.blob, dek: nil, kind: "p256-self", key: ec(selfKey),
            kekID: SelfECDHKEK(privateKey: selfKey).kekID, alg: nil,
            extra: [("expect_error", .string("downgrade"))] + reader(counter: 1, anchor: genuineAnchor))
        let later = try await sealer().rotateDEK(plaintext, over: genuine.state, keys: [device], rotatingVaultSecret: true)
        try negative(
            "negative-epoch-rollback", genuine.blob, .downgrade,
            reader: reader(counter: later.state.counter, anchor: try #require(later.state.identity).anchor))

        // Issue 26: one negative vector per attack.
        let forgedDEK = SymmetricKey(size: .bits256)
        let serverMade = try PreAnchorBlob.seal(
            plaintext, dek: forgedDEK, entries: [try await PreAnchorBlob.entry(device, dek: forgedDEK)], counter: (1 << 53) - 1)
        try negative("negative-pre-anchor-unpinned", serverMade, .unconfirmedVault, reader: reader(counter: 0, anchor: nil))
        let farStore = InMemoryCounterStore()
        await farStore.advance("genuine", to: VaultOpener.maxCounterStep + 1)
        let far = try await VaultSealer(counterStore: farStore, hint: "Vector writer", clock: TestSupport.clock()).seal(
            plaintext, over: genuine.state)
        try negative("negative-counter-jump", far.blob, .counterJump, reader: reader(counter: 1, anchor: genuineAnchor))
        let firstAtTwo = try await sealer().seal(plaintext, over: genuine.state)
        let second = try await sealer().seal(plaintext, over: genuine.state)
        try negative(
            "negative-fork-same-counter", second.blob, .forkDetected,
            reader: reader(
                counter: firstAtTwo.state.counter, anchor: genuineAnchor,
                seen: [(firstAtTwo.state.counter, try #require(try SeenVersions.digest(of: firstAtTwo.state.envelope)))]))
        let joiningKey = try P256.KeyAgreement.PrivateKey()
        let joining = DeviceKEK(privateKey: joiningKey)
        let enrolled = try await sealer().enroll(joining, label: "Phone", in: genuine.state)
        let approved = try await sealer().seal(plaintext, over: enrolled)
        let rightCode = try #require(approved.state.identity).confirmationCode(
            forEntry: joining.kekID, blobDigest: Data(SHA256.hash(data: approved.blob + Data([0x0A]))))
        let wrongCode = String(rightCode.map { $0 == " " ? " " : $0 == "0" ? "1" : "0" })
        try write(
            "negative-pairing-mismatch", blob: approved.blob, dek: nil, kind: "p256", key: ec(joiningKey), kekID: joining.kekID,
            alg: "ECDH-ES+A256KW",
            extra: [("expect_error", .string("pairingMismatch")), ("confirmation_code", .string(wrongCode))]
                + reader(counter: 0, anchor: nil))

        // Issue 26 point 7: version 2 names version 1's digest (`previous`, §11.10). A reader that kept version 1 opens
        // it; one that kept another version 2 (written over 1 by another member) refuses the 3 written over that one.
        let genuineDigest = try #require(try SeenVersions.digest(of: genuine.state.envelope))
        let chained = try await sealer().seal(plaintext, over: genuine.state)
        try write(
            "anchored-chained", blob: chained.blob, dek: chained.state.dek, kind: "p256", key: ec(deviceKey), kekID: device.kekID,
            alg: "ECDH-ES+A256KW", envelope: chained.state.envelope,
            extra: try outcome(chained) + reader(counter: 1, anchor: genuineAnchor, seen: [(1, genuineDigest)]))
        let branchStore = InMemoryCounterStore()
        let branch2 = try await VaultSealer(counterStore: branchStore, hint: "Vector writer", clock: TestSupport.clock()).seal(
            plaintext, over: genuine.state)
        let branch3 = try await VaultSealer(counterStore: branchStore, hint: "Vector writer", clock: TestSupport.clock()).seal(
            plaintext, over: branch2.state)
        try negative(
            "negative-chain-fork", branch3.blob, .forkDetected,
            reader: reader(
                counter: chained.state.counter, anchor: genuineAnchor,
                seen: [(chained.state.counter, try #require(try SeenVersions.digest(of: chained.state.envelope)))]))

        // Issue 26 point 5: a removed member's copy of the recovery code's epoch-1 wrap in an epoch-2 blob of its own
        // (its kept DEK, a secret of its own); a new device restoring with the unchanged code pinned nothing.
        let recovery = try RecoveryCodeKEK(code: code)
        let withCode = try await sealer().create(
            plaintext, vaultID: "copied", recipients: [.init(device, label: "Phone"), .init(recovery, label: "Recovery code")])
        let copied = try await WrapBindingTests.forgedNextEpoch(of: withCode.state)
        try write(
            "negative-copied-wrap", blob: copied, dek: nil, kind: "recovery-code", key: [("recovery_code", .string(code.formatted))],
            kekID: recovery.kekID, alg: "A256KW", extra: [("expect_error", .string("writerNotMember"))] + reader(counter: 0, anchor: nil))
    }
}
