import Foundation
import Testing
import VaultCore
import VaultCrypto

@testable import VaultEnvelope

/// FORMAT.md §13, "Reader rules in detail": one test per answer, each with the error a reader must give. Rules
/// the code already followed are pinned here; the others failed before the change that came with them.
@Suite struct ReaderRulesTests {
    static func vector(_ name: String) throws -> Data {
        try Data(contentsOf: FormatVectorTests.directory.appendingPathComponent("\(name).blob.json"))
    }

    /// The error code `VaultEnvelope(parsing:)` gives, or nil when it parses.
    static func parseError(_ blob: Data) -> String? {
        do {
            _ = try VaultEnvelope(parsing: blob)
            return nil
        } catch {
            return error.code.rawValue
        }
    }

    static func parseError(_ text: String) -> String? { parseError(Data(text.utf8)) }

    /// The error code opening gives, or nil when it opens.
    static func openError(_ blob: Data, keys: [any KeyEncryptionKey]) async -> String? {
        do {
            _ = try await TestSupport.pair().1.open(blob, vaultID: "v", keys: keys)
            return nil
        } catch let error as VaultEnvelopeError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    /// The same letters with the last one's lowest unused bit set: the same bytes to a lax decoder, refused by a strict one.
    static func nonCanonical(_ text: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        precondition(text.count % 4 == 2 || text.count % 4 == 3)
        var letters = Array(text)
        letters[letters.count - 1] = alphabet[alphabet.firstIndex(of: letters.last!)! ^ 1]
        return String(letters)
    }

    static func editEntry(_ blob: Data, _ index: Int = 0, _ edit: @escaping (inout [String: Any]) -> Void) throws -> Data {
        try TestSupport.edit(blob) {
            var entries = TestSupport.entries($0)
            edit(&entries[index])
            $0["wrappedDeks"] = entries
        }
    }

    // MARK: JSON

    @Test func nestingIsLimitedTo64WithTheTopLevelObjectAtDepth1() throws {
        let seed = String(decoding: try SeedCompatibilityTests.androidSeedBlob(kek: SymmetricKey(size: .bits256)).blob, as: UTF8.self)
        func nested(_ arrays: Int) -> String {
            "{\"x\":" + String(repeating: "[", count: arrays) + String(repeating: "]", count: arrays) + "," + seed.dropFirst()
        }
        #expect(Self.parseError(nested(63)) == nil)  // 1 + 63 = 64 levels
        #expect(Self.parseError(nested(64)) == "invalidJSON")
    }

    @Test func lexicalErrorsAreInvalidJSON() throws {
        let blob = String(decoding: try Self.vector("a256kw"), as: UTF8.self)
        #expect(blob.contains(#""hint":"Vector writer""#))
        func hint(_ json: String) -> String { blob.replacingOccurrences(of: #""hint":"Vector writer""#, with: #""hint":"# + json) }
        #expect(Self.parseError(hint(#""\ud800""#)) == "invalidJSON")  // lone high surrogate
        #expect(Self.parseError(hint(#""\udc00x""#)) == "invalidJSON")  // lone low surrogate
        #expect(Self.parseError(hint(#""\ud83d\ude00""#)) == nil)  // a pair is one code point
        #expect(Self.parseError(hint("NaN")) == "invalidJSON")
        #expect(Self.parseError(hint("Infinity")) == "invalidJSON")
        #expect(Self.parseError(Data([0xEF, 0xBB, 0xBF]) + Data(blob.utf8)) == "invalidJSON")  // a BOM
        #expect(Self.parseError(Data(hint("\"").utf8) + Data([0xFF, 0x22]) + Data(blob.utf8.suffix(1))) == "invalidJSON")
        #expect(
            Self.parseError(blob.replacingOccurrences(of: #""hint":"Vector writer""#, with: #""hint":"a","hint":"b""#)) == "invalidJSON")
    }

    @Test func numbersMustBeIntegersInRange() throws {
        let blob = String(decoding: try Self.vector("a256kw"), as: UTF8.self)
        #expect(blob.hasPrefix(#"{"v":1,"#) && blob.contains(#""counter":1,"#))
        #expect(Self.parseError(blob.replacingOccurrences(of: #"{"v":1,"#, with: #"{"v":1.0,"#)) == "invalidShape")
        #expect(Self.parseError(blob.replacingOccurrences(of: #"{"v":1,"#, with: #"{"v":1e0,"#)) == "invalidShape")
        for counter in ["1.0", "1e0", "0", "-1", "9007199254740992", "9223372036854775807", "9223372036854775808", "\"1\""] {
            #expect(
                Self.parseError(blob.replacingOccurrences(of: #""counter":1,"#, with: #""counter":\#(counter),"#)) == "malformed",
                "counter \(counter)")
        }
        // A literal beyond what a double holds is not a JSON number any parser here reads.
        #expect(Self.parseError(blob.replacingOccurrences(of: #""counter":1,"#, with: #""counter":1e400,"#)) == "invalidJSON")
        // 2^53 − 1 is the largest counter: it parses (and then fails the MAC, as any edit does).
        #expect(Self.parseError(blob.replacingOccurrences(of: #""counter":1,"#, with: #""counter":9007199254740991,"#)) == nil)
    }

    // MARK: Base64url

    @Test func nonCanonicalBase64URLIsInvalidShapeInSeedMembersAndMalformedInExtendedOnes() throws {
        let blob = try Self.vector("a256kw-passphrase")
        #expect(
            Self.parseError(try Self.editEntry(blob) { $0["dek_cipher"] = Self.nonCanonical($0["dek_cipher"] as! String) })
                == "invalidShape")
        #expect(Self.parseError(try TestSupport.edit(blob) { $0["tag"] = Self.nonCanonical($0["tag"] as! String) }) == "invalidShape")
        #expect(Self.parseError(try TestSupport.edit(blob) { $0["macs"] = Self.nonCanonical($0["macs"] as! String) }) == "malformed")
        #expect(Self.parseError(try Self.editEntry(blob) { $0["salt"] = Self.nonCanonical($0["salt"] as! String) }) == "malformed")
        #expect(Self.parseError(try Self.editEntry(blob) { $0["salt"] = ($0["salt"] as! String) + "==" }) == "malformed")
        let gcm = try Self.vector("a256gcmkw")
        #expect(Self.parseError(try Self.editEntry(gcm) { $0["tag"] = Self.nonCanonical($0["tag"] as! String) }) == "malformed")
        // In the seed form members other than the seed's mean nothing and are not read.
        let seed = try SeedCompatibilityTests.androidSeedBlob(kek: SymmetricKey(size: .bits256)).blob
        #expect(Self.parseError(try Self.editEntry(seed) { $0["iv"] = "A=" }) == nil)
    }

    // MARK: Timestamps

    @Test func updatedUtcSpellings() throws {
        let seed = try SeedCompatibilityTests.androidSeedBlob(kek: SymmetricKey(size: .bits256)).blob
        func parsed(_ text: String) throws -> Int64? {
            try? VaultEnvelope(parsing: try TestSupport.edit(seed) { $0["updatedUtc"] = text }).updatedAt.millisecondsSinceEpoch
        }
        let base = try #require(try parsed("2026-08-12T19:00:00Z"))
        #expect(try parsed("2026-08-12t19:00:00z") == base)
        #expect(try parsed("2026-08-12T19:00:00+00:00") == base)
        #expect(try parsed("2026-08-12T19:00:00.1Z") == base + 100)
        #expect(try parsed("2026-08-12T19:00:00.123456789Z") == base + 123)  // digits past milliseconds are dropped
        #expect(try parsed("2026-08-12T18:59:60Z") == base)  // second 60 is second 0 of the next minute
        for refused in [
            "2026-08-12T19:00:00-00:00", "2026-08-12 19:00:00Z", "2026-08-12T19:00:00", "2026-08-12T19:00:00.Z",
            "2026-08-12T19:00:00+01:00", "2026-02-30T19:00:00Z", "2026-08-12T24:00:00Z", "2026-08-12T19:00:61Z",
            "2026-08-12T19:00:00." + String(repeating: "0", count: 20) + "Z",
        ] {
            #expect(Self.parseError(try TestSupport.edit(seed) { $0["updatedUtc"] = refused }) == "invalidShape", "\(refused)")
        }
    }

    @Test func createdFollowsTheSameGrammarAndIsMalformedOtherwise() throws {
        let blob = try Self.vector("a256kw")
        #expect(Self.parseError(try Self.editEntry(blob) { $0["created"] = "2026-08-12t19:00:00z" }) == nil)
        #expect(Self.parseError(try Self.editEntry(blob) { $0["created"] = "2026-08-12T19:00:00Z" }) == nil)
        #expect(Self.parseError(try Self.editEntry(blob) { $0["created"] = "2026-08-12T19:00:00-00:00" }) == "malformed")
        #expect(Self.parseError(try Self.editEntry(blob) { $0["created"] = nil }) == "malformed")
    }

    // MARK: Lengths in code points

    @Test func labelsAreCountedInCodePointsNotCharacters() async throws {
        let key = AESGCMKEK(key: SymmetricKey(size: .bits256))
        // Written with a short label, then lengthened as a server would: the writer refuses what readers refuse.
        func blob(label: String) async throws -> Data {
            let sealed = try await TestSupport.pair().0.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "x")])
                .blob
            return label.unicodeScalars.count <= WrappedKey.maxLabelCharacters
                ? try await TestSupport.pair().0.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: label)]).blob
                : try Self.editEntry(sealed) { $0["label"] = label }
        }
        // 200 characters, 400 code points (e + combining acute): over the limit.
        #expect(Self.parseError(try await blob(label: String(repeating: "e\u{301}", count: 200))) == "malformed")
        // 130 flags are 130 characters and 260 code points.
        #expect(Self.parseError(try await blob(label: String(repeating: "🇫🇷", count: 130))) == "malformed")
        // 256 precomposed é: 256 code points, 512 UTF-8 bytes: at the limit.
        let atLimit = try await blob(label: String(repeating: "é", count: 256))
        #expect(try await TestSupport.pair().1.open(atLimit, vaultID: "v", keys: [key]).plaintext == TestSupport.plaintext)
    }

    @Test func theHintIsCountedInCodePointsAndIsInvalidShape() throws {
        let seed = try SeedCompatibilityTests.androidSeedBlob(kek: SymmetricKey(size: .bits256)).blob
        #expect(Self.parseError(try TestSupport.edit(seed) { $0["hint"] = String(repeating: "é", count: 256) }) == nil)
        #expect(Self.parseError(try TestSupport.edit(seed) { $0["hint"] = String(repeating: "é", count: 257) }) == "invalidShape")
        #expect(Self.parseError(try TestSupport.edit(seed) { $0["hint"] = String(repeating: "e\u{301}", count: 129) }) == "invalidShape")
    }

    // MARK: Members of the extended form

    @Test func dekSealsAndMacsAreRequired() throws {
        let blob = try Self.vector("a256kw")
        #expect(Self.parseError(try TestSupport.edit(blob) { $0["dek_seals"] = nil }) == "malformed")
        #expect(Self.parseError(try TestSupport.edit(blob) { $0["macs"] = nil }) == "malformed")
        #expect(Self.parseError(try TestSupport.edit(blob) { $0["macs"] = Base64URL.encode(Data(count: 64)) }) == "malformed")
    }

    @Test func addingACounterToASeedBlobIsMalformedBeforeAnyMAC() throws {
        let seed = try SeedCompatibilityTests.androidSeedBlob(kek: SymmetricKey(size: .bits256)).blob
        #expect(Self.parseError(try TestSupport.edit(seed) { $0["counter"] = 5 }) == "malformed")
    }

    @Test func aDEKCipherOfTheWrongLength() async throws {
        let blob = try Self.vector("a256kw")
        #expect(Self.parseError(try Self.editEntry(blob) { $0["dek_cipher"] = Base64URL.encode(Data(count: 48)) }) == "malformed")
        // The seed form fixes no length; the key's scheme finds out.
        let kek = SymmetricKey(size: .bits256)
        let seed = try SeedCompatibilityTests.androidSeedBlob(kek: kek).blob
        let short = try Self.editEntry(seed) {
            $0["dek_cipher"] = Base64URL.encode(Base64URL.decode($0["dek_cipher"] as! String)!.dropLast())
        }
        #expect(await Self.openError(short, keys: [AESGCMKEK(key: kek, kekID: "vault-kek")]) == "unwrapFailed")
    }

    @Test func anUnknownKDFIsUnsupportedAndAKDFWhereNoneBelongsIsMalformed() throws {
        #expect(
            Self.parseError(try Self.editEntry(try Self.vector("a256kw-passphrase")) { $0["kdf"] = "PBKDF2" }) == "unsupportedAlgorithm")
        #expect(Self.parseError(try Self.editEntry(try Self.vector("a256gcmkw")) { $0["kdf"] = "HKDF-SHA256" }) == "malformed")
    }

    @Test func aRepeatedKEKIDIsMalformedInTheExtendedForm() throws {
        let blob = try TestSupport.edit(try Self.vector("a256kw")) { $0["wrappedDeks"] = TestSupport.entries($0) + TestSupport.entries($0) }
        #expect(Self.parseError(blob) == "malformed")
    }

    @Test func aKeyWhoseKEKIDNamesAnEntryOfAnotherAlgIsUnwrapFailed() async throws {
        // The A256KW vector's kek_id, claimed by an A256GCMKW key: that entry is still the one chosen, and it fails.
        let blob = try Self.vector("a256kw")
        let kekID = TestSupport.entries(try JSONSerialization.jsonObject(with: blob) as! [String: Any])[0]["kek_id"] as! String
        let impostor = AESGCMKEK(key: SymmetricKey(size: .bits256), kekID: kekID)
        #expect(await Self.openError(blob, keys: [impostor, try DeviceKEK.generate()]) == "unwrapFailed")
    }

    // MARK: Seed-form entries

    /// A seed-form blob of `plaintext` under `dek`, with `entries` as given.
    static func seedBlob(dek: Data, entries: [[String: Any]]) throws -> Data {
        let box = try AES.GCM.seal(TestSupport.plaintext, using: SymmetricKey(data: dek))
        return try JSONSerialization.data(
            withJSONObject: [
                "v": 1, "wrappedDeks": entries, "cipher": Base64URL.encode(box.ciphertext),
                "iv": Base64URL.encode(box.nonce.withUnsafeBytes { Data($0) }), "tag": Base64URL.encode(box.tag),
                "updatedUtc": "2026-08-12T19:00:00Z",
            ] as [String: Any])
    }

    @Test func seedEntriesSharingAKEKIDAreTriedInOrder() async throws {
        // Two seed-era Android devices, both `vault-kek`: the second device's entry is found after the first's fails.
        let kek = SymmetricKey(size: .bits256)
        let mine = try SeedCompatibilityTests.androidSeedBlob(kek: kek).blob
        let other: [String: Any] = ["kek_id": "vault-kek", "dek_cipher": Base64URL.encode(SecureRandom.bytes(count: 60))]
        let key = AESGCMKEK(key: kek, kekID: "vault-kek")
        for order in [true, false] {
            let blob = try TestSupport.edit(mine) {
                $0["wrappedDeks"] = order ? [other] + TestSupport.entries($0) : TestSupport.entries($0) + [other]
            }
            #expect(await Self.openError(blob, keys: [key]) == nil)
        }
        let neither = try TestSupport.edit(mine) { $0["wrappedDeks"] = [other, other] }
        #expect(await Self.openError(neither, keys: [key]) == "unwrapFailed")
    }

    /// An RSA-2048 key and two OAEP-SHA256 ciphertexts of the DEK 00 01 … 1f made with Python `cryptography`: one with
    /// MGF1-SHA1 (what Java's `OAEPWithSHA-256AndMGF1Padding` writes by default), one with MGF1-SHA256.
    static let rsaPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCiKYQY5Le71SUr
        34RCM1j4k6uv6jOL3mGFoo+lFFGks23FWyrj+WsHkgbV+WGdUT7T2aQ/dtTfeK0f
        uBxFJIfKPR/nwW9gsbXxra9jAc0pQA8vi33vmNmj0IKVENzudTL6VXW2dHmRRPBp
        NnZJUv5S+3QC45vJF++MmubYIlNQmc/mmnldL46dH5baCqskn3zCz2yNX+ANTzxr
        r66v0/U0XgjH63j5i2EuuYZR4BrRKIQmXdn6oTS5xqkGjWK8zwl5Qu1ide+WlBbR
        ZWGGTDgE6YVXBy5PZRZUhHiAfGZOywNyM9ZhGzAQ5rzUw9wpZ+tBZW/1AGnoXniz
        ZbHFakSBAgMBAAECggEAKw+xN1cM/0DzdPoOyfGOr7uu/LDJbVvpM65eTKzfnUfU
        X3L9Kbqi1EjPreRiKn9XmrQRrJSmpI0ME/806ptvv6GJpmY0aE3ojbvcdgMVct3C
        6pI1J/nD2X9WHbVzpZLTrawh7Qhy+8N9v8KpmIEEbg692MKOLNFBWGoN4NkEnMM+
        zALXam7i5xw+1CrkKMmFZpJhbwuXcjwH83csCccG0sRn9QUZvi84Huz+dMggWNzW
        SBbCOLtrJD2oRcEv0Tm4pPs8OpjqEPstNoa6VlVsFVVVwM+vsHL5eDmI7YIylBf1
        4sYZ9XJRdYSxFtYnIqCvlkbsivyjU6HCNz6ueUF97QKBgQDfL6IVojp5V0nJDB7s
        Mme03v/Jjv735ACHq92KY+NETI1JuNVAPEIAq40TjPfOHaTaHOXcHIkPvPvqEY1S
        wX/984VrH6w4pt5cAVYQgEezTPs8T/WYDSjYIFhlh4rIZaX5Hs/7raHE9lByHLdB
        7PbFPNindKo4xAYlO6E6h2GPrwKBgQC6AQp9zqoZyfHIj77RAAzTFTm9mRWZPoMs
        nVpwL9QG456iDx2JOppDbapvTQa0GUawTfkcx+51OK4GNOxyCH7tpouq+x5CLwxL
        vbeaJYP5smTGHsZhqwj6vYU3EgXQAlIJ8nrk7mYevv/uUSYB23nAMeiMKWl46Jsk
        P5OLSwnKzwKBgEZonYabpjzPd7yQMVUsVaEu1Jz+mpsTd8NVSc+10WWjjNMcF1Jr
        cBsMA7aOO0LwASi6Ax3cdrTbVtGx9daMqtcvswBnfopkwjNeTItqHLSI7Z1KUF1G
        kYMVOS3Wg8bSonij6tMoJKehWSGWw41tty/kESlK2cSMuq+WTzfKq9GLAoGAGkIz
        XPdkBCgCPjIs2gyLwvDoKeAGsI+mrRG5xsS5xg80QeSoYssnJAXDXdsd6yb2V8Vq
        Oanv/BR4XN/z0VVptdshNI4nA2jo73hlBxnsu793gpCtqPQgXGWM/O1KbMcnFchp
        mRAe0pBcSSSjnPeDBKMHFWJzRWJxJHjlN3DsfPkCgYEAolqewgDQ9chAv1VL8h9m
        psye0B/tqaAwxsds8faPgEXwpc2el1pkjCP8az1azOoLzKJNO5PV0/KR9MBRGtcX
        5v361borb2E+qcsuNHSH2CFqt4EfOuzemGIUz7aXErCXeyhlfUeXIFxwFghektPr
        2AuUS1B7jArg3PkJo3eWMnM=
        -----END PRIVATE KEY-----
        """
    static let oaepMGF1SHA1 =
        "ne9DZIIoqT-Iy7ie1NgNBPOL52PlffRaaTRZUbYF2QoaE--z-yE4zRFZjzUCiihLPhHZkX35wLVijZxSP4KSJaXX4G-HZQr-LP8hDylRU0qJYpDXFJf1PvLAf7z1esq5A6Wj4aFL_MbHCXzOUb0HQKTfl4XD_ASTyEk98fyVx5eP0shMPA0RO5BA19fnN3p--GQ8fWQU1rCqhuI_Ge73K_UNKmwEe4UjKGFpnZL5CrU9Uhppur-yNc8YFAXprsIgr7epjUJ3Rx5hbc0VqWmRO8f3sSuVz8lPw8FwGC4JBCwUG3HuU8KrnDG-moxzgvsq-q3-Co76WoAWXBwualb6Ng"
    static let oaepMGF1SHA256 =
        "Ok6N2ZCAJ3uNBJVkF49Fm95QSzWMjUP6xJruSDjqX8kJ1QpJ1f4c8e3PpH6WZd9a33dmODIWP04L85mpuGV_83Q_MPWr7VBEG9GN3i13vOyNLptGcgvluqUJ6hlyHYTIQ6SQitFVtbghaLt7K9IgVZntSM1-x8-n7sBKexl7cBOb7EyUicYhRVI9sSo1hVQ2vxsc8k2X8de8c2kbxZjkYGb0vKEZ9pDJEoFXlhqRDPEGZUiw1ZvHbvnav94Doq5UnKiEqq0yf1HlcIKIEYSg3XCJXGGeGGY4nEiVRhKqQrwNtHLaM3-3T47yeTTV4PRe-pvlq4yFbVPvVhKZyn8jPQ"

    @Test func seedRSAEntriesOpenWithEitherMGF1Hash() async throws {
        let key = RSAKEK(privateKey: try RSA.Encryption.PrivateKey(pemRepresentation: Self.rsaPEM))
        let dek = Data(0..<32)
        for ciphertext in [Self.oaepMGF1SHA256, Self.oaepMGF1SHA1] {
            // kek_id in the seed form is §6's: the RFC 7638 thumbprint of the RSA public key.
            let blob = try Self.seedBlob(dek: dek, entries: [["kek_id": key.kekID, "dek_cipher": ciphertext]])
            // Unwrapped, then refused: a public-key entry proves no writer to a reader with nothing pinned.
            #expect(await Self.openError(blob, keys: [key]) == "unconfirmedVault")
        }
        let other = try Self.seedBlob(dek: dek, entries: [["kek_id": key.kekID, "dek_cipher": Base64URL.encode(Data(count: 256))]])
        #expect(await Self.openError(other, keys: [key]) == "unwrapFailed")
    }

    @Test func seedA256KWEntriesAreFoundByTheKeyCheckValue() async throws {
        let keyBytes = SecureRandom.bytes(count: 32)
        let url = try TestSupport.scratchDirectory().appendingPathComponent("kek")
        try OwnerOnlyFile.create(url, bytes: keyBytes)
        let key = try SymmetricKEK(contentsOf: url)
        #expect(key.kekID == KeyIdentifier.symmetric(SymmetricKey(data: keyBytes)))
        let dek = SecureRandom.bytes(count: 32)
        let wrapped = try AES.KeyWrap.wrap(SymmetricKey(data: dek), using: SymmetricKey(data: keyBytes))
        let blob = try Self.seedBlob(dek: dek, entries: [["kek_id": key.kekID, "dek_cipher": Base64URL.encode(wrapped)]])
        #expect(await Self.openError(blob, keys: [key]) == nil)
        let misnamed = try Self.seedBlob(dek: dek, entries: [["kek_id": "my-key", "dek_cipher": Base64URL.encode(wrapped)]])
        #expect(await Self.openError(misnamed, keys: [key]) == "noMatchingKey")
    }

    @Test func seedEntriesCarriedIntoTheExtendedFormTakeTheHintAsLabelAndTheMigrationTimeAsCreated() async throws {
        let kek = SymmetricKey(size: .bits256)
        let key = AESGCMKEK(key: kek, kekID: "vault-kek")
        let (sealer, opener) = TestSupport.pair()
        let opened = try await opener.open(try SeedCompatibilityTests.androidSeedBlob(kek: kek).blob, vaultID: "v", keys: [key])
        let upgraded = try await sealer.seal(TestSupport.plaintext, over: opened.state, keys: [key], allowingPrompts: true)
        let entry = try #require(upgraded.state.envelope.entries.first)
        #expect(entry.label == "Pixel 8")
        #expect(entry.created == upgraded.state.envelope.updatedAt || entry.created! < upgraded.state.envelope.updatedAt)
    }

    // MARK: Passphrases

    @Test func passphrasesAreNormalizedToNFCOnBothSides() async throws {
        let decomposed = "cafe\u{301} cre\u{300}me brûle\u{301}e"
        let composed = "café crème brûlée"
        #expect(Array(decomposed.utf8) != Array(composed.utf8))
        let (sealer, opener) = TestSupport.pair()
        let enrolled = try PassphraseKEK(passphrase: decomposed, costs: TestSupport.fastCosts)
        let blob = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(enrolled, label: "Passphrase")]).blob
        let envelope = try VaultEnvelope(parsing: blob)
        let unlocked = try PassphraseKEK.unlock(passphrase: composed, in: envelope)
        #expect(unlocked.kekID == enrolled.kekID)
        #expect(try await opener.open(blob, vaultID: "v", keys: [unlocked]).plaintext == TestSupport.plaintext)
    }

    @Test func anEntryEnrolledFromDecomposedTextBeforeNormalizationStillOpens() async throws {
        // What the code before NFC wrote: Argon2id over the bytes as typed.
        let typed = "cafe\u{301}-passphrase"
        let salt = SecureRandom.bytes(count: 16)
        let costs = TestSupport.fastCosts
        let raw = try #require(Argon2idPlatform.builtIn).deriveKey(
            password: Data(typed.utf8), salt: salt, iterations: costs.iterations, memoryKiB: costs.memoryKiB,
            parallelism: costs.parallelism, outputByteCount: 32)
        let old = ForgedRecipient(kekID: KeyIdentifier.symmetric(raw), algorithm: .a256kw) { dek in
            WrappedKey(
                kekID: KeyIdentifier.symmetric(raw), encryptedKey: try AES.KeyWrap.wrap(dek, using: raw),
                scheme: .a256kw(.passphrase(salt: salt, costs: costs)), label: nil, created: nil)
        }
        let blob = try await TestSupport.pair().0.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(old, label: "Passphrase")])
            .blob
        let unlocked = try PassphraseKEK.unlock(passphrase: typed, in: try VaultEnvelope(parsing: blob))
        #expect(unlocked.kekID == old.kekID)
    }

    // MARK: Recovery codes

    @Test func recoveryCodesSkipPastedWhitespaceAndNothingElse() throws {
        let code = RecoveryCode.generate()
        let expected = try RecoveryCodeKEK(code: code).kekID
        let formatted = code.formatted
        for separator in ["\t", "\n", "\r\n", "\u{A0}", "  ", " - "] {
            let pasted = "\n" + formatted.replacingOccurrences(of: "-", with: separator).lowercased() + "\r\n"
            #expect(
                try RecoveryCodeKEK(code: RecoveryCode(parsing: pasted)).kekID == expected,
                "separator \(separator.unicodeScalars.map(\.value))")
        }
        func refused(_ text: String) -> Bool {
            do {
                _ = try RecoveryCode(parsing: text)
                return false
            } catch {
                return error.code == .invalidRecoveryCode
            }
        }
        #expect(refused(formatted.replacingOccurrences(of: "-", with: "\u{2013}")))  // an en dash is not skipped
        #expect(refused(formatted.replacingOccurrences(of: "-", with: "\u{3000}")))  // nor an ideographic space
        #expect(refused(String(formatted.dropLast())))  // 34 characters
        #expect(refused(formatted + "0"))  // 36
        #expect(refused("U" + formatted.dropFirst()))  // outside the alphabet
        #expect(refused("\u{FF10}" + formatted.dropFirst()))  // a full-width digit
    }
}
