import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultJSON
import VaultWire

@testable import VaultEnvelope

/// FORMAT.md §11.8: the write key every member derives from an epoch's secret, and the proof message it signs, against
/// `write-proof.json` (computed with Python `cryptography`) and `kotlin-write-proof.json` (the Kotlin library's); the
/// Kotlin library and crosscheck.py read the same files.
@Suite struct WriteKeyVectorTests {
    struct Vector {
        let json: JSONValue
        func text(_ name: String) throws -> String { try #require(json[name]?.stringValue) }
        func base64URL(_ name: String) throws -> Data { try #require(Base64URL.decode(try text(name))) }
        func integer(_ name: String) throws -> UInt64 { UInt64(try #require(json[name]?.integerValue)) }
    }

    static let files = ["write-proof.json", "kotlin-write-proof.json"]

    static func vector(_ file: String) throws -> Vector {
        let url = FormatVectorTests.directory.appendingPathComponent(file)
        return Vector(json: try JSONParser().parse(try Data(contentsOf: url)))
    }

    static func identity(_ vector: Vector, secret: String, epoch: String) throws -> VaultIdentity {
        VaultIdentity(rawID: try vector.base64URL("vault_id"), epoch: try vector.integer(epoch), secrets: [try vector.base64URL(secret)])
    }

    @Test(arguments: files) func everyMemberDerivesTheSameWriteKeyFromTheEpochsSecret(file: String) throws {
        let vector = try Self.vector(file)
        let key = try Self.identity(vector, secret: "vault_secret", epoch: "epoch").writeKey
        #expect(key.publicKey.rawRepresentation == (try vector.base64URL("write_key")))
        let next = try Self.identity(vector, secret: "next_vault_secret", epoch: "next_epoch").writeKey
        #expect(next.publicKey.rawRepresentation == (try vector.base64URL("next_write_key")))
        // Another epoch with the same secret is another key: a proof for one epoch proves nothing for the next.
        let otherEpoch = VaultIdentity(
            rawID: try vector.base64URL("vault_id"), epoch: try vector.integer("epoch") + 1, secrets: [try vector.base64URL("vault_secret")]
        )
        #expect(otherEpoch.writeKey.publicKey.rawRepresentation != key.publicKey.rawRepresentation)
    }

    @Test(arguments: files) func theProofMessageAndItsSignatureAreTheVectors(file: String) throws {
        let vector = try Self.vector(file)
        let message = WriteProof.message(
            action: try #require(BackupAction(rawValue: try vector.text("action"))), storedSyncID: try vector.text("stored_sync_id"),
            bodyDigest: Data(SHA256.hash(data: Data(try vector.text("body").utf8))), nextWriteKey: try vector.base64URL("next_write_key"))
        #expect(message == (try vector.base64URL("message")))
        let publicKey = try P256.Signing.PublicKey(rawRepresentation: try vector.base64URL("write_key"))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try vector.base64URL("signature"))
        #expect(publicKey.isValidSignature(signature, for: message))
        #expect(!publicKey.isValidSignature(signature, for: message.dropLast()))
        // What this implementation signs verifies under the vector's key.
        let ours = try Self.identity(vector, secret: "vault_secret", epoch: "epoch").writeKey.signature(for: message)
        #expect(publicKey.isValidSignature(ours, for: message))
    }
}
