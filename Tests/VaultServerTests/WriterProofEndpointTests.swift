import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultServer
import VaultTestSupport
import VaultWire

/// The writer proof on D2 save and erasure (FORMAT.md §11.8, docs/openapi.yaml): every bad header gets its documented
/// answer, and nothing stored changes without a proof by the stored version's write key.
@Suite("Writer proof on save and erasure")
struct WriterProofEndpointTests {
    let server: InProcessServer
    let member: P256.Signing.PrivateKey

    init() throws {
        server = try InProcessServer(TestServerOptions())
        member = try P256.Signing.PrivateKey()
    }

    func session(sub: String = UUID().uuidString) async throws -> String {
        try await server.sessionToken(for: TestIssuer.shared.accessToken(sub: sub, azp: "oem-a"))
    }

    /// The writer headers of `action` with `body` over `storedSyncID`, proven by `key` and naming `next`.
    func proof(
        _ action: BackupAction, body: Data, over storedSyncID: String, by key: P256.Signing.PrivateKey, next: P256.Signing.PrivateKey?
    )
        throws -> [String: String]
    {
        let nextKey = next?.publicKey.rawRepresentation
        let message = WriteProof.message(
            action: action, storedSyncID: storedSyncID, bodyDigest: Data(SHA256.hash(data: body)), nextWriteKey: nextKey)
        var headers = [WriteProof.proofHeader: Base64URL.encode(try key.signature(for: message).rawRepresentation)]
        if let nextKey { headers[WriteProof.writeKeyHeader] = Base64URL.encode(nextKey) }
        return headers
    }

    func erase(_ token: String, headers: [String: String] = [:]) async throws -> APIReply {
        try await server.send(
            "POST", "/wallet-backup.ashx?action=delete", headers: headers.merging(["Authorization": "Bearer \(token)"]) { $1 })
    }

    @Test(arguments: ["not base64!", String(repeating: "A", count: 85), Base64URL.encode(Data(repeating: 7, count: 64)), ""])
    func aWriteKeyThatIsNoP256PointIsInvalidWriteKey(_ value: String) async throws {
        let token = try await session()
        let reply = try await server.save(sampleBlob(), token: token, headers: [WriteProof.writeKeyHeader: value])
        #expect(reply.status == 400)
        #expect(reply.json["error"] as? String == "invalid_write_key")
        #expect(try await server.load(token: token).status == 404)
    }

    @Test func aVersionNamingAWriteKeyIsReplacedAndErasedOnlyWithItsProof() async throws {
        let token = try await session()
        let memberKey = Base64URL.encode(member.publicKey.rawRepresentation)
        let first = try await server.save(sampleBlob("v1"), token: token, headers: [WriteProof.writeKeyHeader: memberKey])
        #expect(first.status == 200)
        let stored = try #require(first.json["sync_id"] as? String)

        // No proof, a garbled one, one by another key, one for the other action, one for another body: 403, one body.
        let stranger = try P256.Signing.PrivateKey()
        let refused: [[String: String]] = [
            [:], [WriteProof.proofHeader: "AAAA"], [WriteProof.proofHeader: Base64URL.encode(Data(repeating: 1, count: 64))],
            try proof(.save, body: sampleBlob("v2"), over: stored, by: stranger, next: nil),
            try proof(.delete, body: sampleBlob("v2"), over: stored, by: member, next: nil),
            try proof(.save, body: sampleBlob("other"), over: stored, by: member, next: nil),
            try proof(.save, body: sampleBlob("v2"), over: "2020-01-01T00:00:00.000Z", by: member, next: nil),
        ]
        for headers in refused {
            let reply = try await server.save(sampleBlob("v2"), token: token, headers: headers)
            #expect(reply.status == 403, "\(headers.keys)")
            #expect(reply.json["error"] as? String == "write_proof_required")
            #expect(try await erase(token, headers: headers).status == 403)
        }
        #expect(try await server.load(token: token).body == sampleBlob("v1"))

        // The member's proof replaces the version and names the next key; replayed, it proves nothing.
        let next = try P256.Signing.PrivateKey()
        let good = try proof(.save, body: sampleBlob("v2"), over: stored, by: member, next: next)
        let second = try await server.save(sampleBlob("v2"), token: token, headers: good)
        #expect(second.status == 200)
        #expect(try await server.save(sampleBlob("v2"), token: token, headers: good).status == 403)
        let current = try #require(second.json["sync_id"] as? String)
        #expect(try await erase(token, headers: try proof(.delete, body: Data(), over: current, by: member, next: nil)).status == 403)
        #expect(try await erase(token, headers: try proof(.delete, body: Data(), over: current, by: next, next: nil)).status == 200)
        #expect(try await server.load(token: token).status == 404)
    }

    @Test func theOperatorErasesAUserWhoHoldsNoKeyAnyMore() async throws {
        let sub = UUID().uuidString
        let token = try await session(sub: sub)
        let saved = try await server.save(
            sampleBlob("v1"), token: token, headers: [WriteProof.writeKeyHeader: Base64URL.encode(member.publicKey.rawRepresentation)])
        #expect(saved.status == 200)
        #expect(try await erase(token).status == 403)
        try ServerBootstrap.eraseUser(server.configuration, issuer: TestIssuer.shared.issuer, authorizedParty: "oem-a", subject: sub)
        let versions = try await server.send("GET", "/wallet-backup.ashx?action=versions", headers: ["Authorization": "Bearer \(token)"])
        #expect((versions.json["versions"] as? [Any])?.isEmpty == true)
        // Erased, the account starts again with the seed's bare save.
        #expect(try await server.save(sampleBlob("fresh"), token: token).status == 200)
    }
}
