import Foundation
import Testing
import VaultCore
import VaultJOSE
import VaultJSON

@testable import VaultServer

/// The pieces a D1 mint is made of that were written for speed, held to what they replace.
@Suite struct MintPartsTests {
    @Test(arguments: ["", "a.b.c", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.AbC-_9", String(repeating: "x", count: 700)])
    func theTokenResponseIsWhatTheSerializerWrites(token: String) {
        let expected = PortableJSONSerializer.data(
            of: .object([
                ("access_token", .string(token)), ("aud", .string("wallet-backup")), ("expires_in", .integer(600)),
                ("issued_token_type", .string("urn:ietf:params:oauth:token-type:jwt")), ("token_type", .string("Bearer")),
            ]))
        #expect(SessionTokenEndpoint.TokenResponse.json(accessToken: token) == expected)
    }

    @Test func thePoolNeverHandsOutTheSameBytesTwice() {
        let pool = RandomBytePool()
        // Three pages' worth in pieces that do not divide a page, so refills fall mid-piece.
        var seen = Set<Data>()
        var total = 0
        while total < 3 * RandomBytePool.pageSize {
            let piece = pool.bytes(count: 24)
            #expect(piece.count == 24)
            #expect(seen.insert(piece).inserted)
            total += piece.count
        }
        #expect(pool.bytes(count: 0).isEmpty)
        #expect(pool.bytes(count: RandomBytePool.pageSize).count == RandomBytePool.pageSize)
    }

    @Test func thePoolsBytesLookRandom() {
        let pool = RandomBytePool()
        var ones = 0
        let bytes = (0..<256).reduce(into: Data()) { data, _ in data.append(pool.bytes(count: 16)) }
        for byte in bytes { ones += byte.nonzeroBitCount }
        // 32 768 bits: a fair source lands within ±5σ (σ ≈ 90.5) of half; an all-zero or stuck page does not.
        #expect(abs(ones - bytes.count * 4) < 453)
    }

    @Test func concurrentCallersGetDistinctJTIs() async throws {
        let service = try SessionTokenService(issuer: "i", keys: [.init(keyID: "k", secret: Data(repeating: 1, count: 32))])
        let identity = SessionIdentity(issuer: "o", subject: "s", authorizedParty: "a")
        let now = UTCTimestamp(millisecondsSinceEpoch: 1_800_000_000_000)
        let tokens = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<8 { group.addTask { try (0..<200).map { _ in try service.mint(for: identity, now: now) } } }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(tokens).count == tokens.count)
    }
}
