import Foundation
import Testing
import VaultCore
import VaultCrypto

@testable import VaultEnvelope

/// An Argon2id stand-in that counts its calls: a test that expects a refusal "before any derivation" checks that
/// the count stayed 0. Its keys are SHA-256 of the inputs, so the same passphrase and entry give the same key.
final class CountingArgon2id: Argon2idDeriving, @unchecked Sendable {
    private let lock = NSLock()
    private var calls = 0
    private(set) var largestMemoryKiB = 0

    var count: Int { lock.withLock { calls } }

    func deriveKey(password: Data, salt: Data, iterations: Int, memoryKiB: Int, parallelism: Int, outputByteCount: Int) throws
        -> SymmetricKey
    {
        lock.withLock {
            calls += 1
            largestMemoryKiB = max(largestMemoryKiB, memoryKiB)
        }
        return SymmetricKey(data: Data(SHA256.hash(data: password + salt + Data("\(memoryKiB),\(iterations),\(parallelism)".utf8))))
    }
}

/// FORMAT.md §7.3: what one open may make a passphrase reader derive, checked before the first derivation
/// (issue 14, attack 3). Each refusal test fails on the code before the rule: it derived first, or not at all.
@Suite struct BoundedWorkTests {
    /// A blob with one passphrase entry per element of `costs` (passphrases "pass 0", "pass 1", ...), enrolled at the
    /// floor with `argon2id` and then edited to `costs`: the edit breaks the MACs, but costs are checked before any
    /// key exists, which is the point.
    static func blob(costs: [(m: Int, t: Int, p: Int)], argon2id: CountingArgon2id) async throws -> VaultEnvelope {
        // A writer refuses more passphrase entries than a reader derives for: the rest are copies under other ids,
        // added as a server would, since the costs are checked before any entry is used.
        var recipients: [VaultSealer.Recipient] = []
        for index in costs.indices.prefix(Argon2idCosts.maxEntriesPerOpen) {
            let key = try PassphraseKEK(passphrase: "pass \(index)", costs: .floor, argon2id: argon2id)
            recipients.append(.init(key, label: "Passphrase \(index)"))
        }
        let sealed = try await TestSupport.pair().0.create(TestSupport.plaintext, vaultID: "v", recipients: recipients).blob
        let edited = try TestSupport.edit(sealed) {
            var entries = TestSupport.entries($0)
            while entries.count < costs.count {
                var copy = entries[entries.count - 1]
                copy["kek_id"] = Base64URL.encode(SecureRandom.bytes(count: 16))
                entries.append(copy)
            }
            for (index, cost) in costs.enumerated() {
                entries[index]["m"] = cost.m
                entries[index]["t"] = cost.t
                entries[index]["p"] = cost.p
            }
            $0["wrappedDeks"] = entries
        }
        return try VaultEnvelope(parsing: edited)
    }

    /// Unlocks with a fresh counter; returns the error code (nil on success) and how many derivations ran.
    static func unlock(_ passphrase: String, _ envelope: VaultEnvelope) -> (code: String?, derived: Int) {
        let counting = CountingArgon2id()
        do {
            _ = try PassphraseKEK.unlock(passphrase: passphrase, in: envelope, argon2id: counting)
            return (nil, counting.count)
        } catch {
            return (error.code.rawValue, counting.count)
        }
    }

    @Test(arguments: [(262_145, 3, 1), (65536, 9, 1), (65536, 3, 5), (1_048_576, 2, 1), (65536, 16, 16)])
    func costsAboveTheNewCeilingAreRefusedBeforeDeriving(m: Int, t: Int, p: Int) async throws {
        // 256 MiB, 8 passes, 4 lanes; the old ceiling (1 GiB, 16, 16) let each of these through to Argon2id.
        let envelope = try await Self.blob(costs: [(m, t, p)], argon2id: CountingArgon2id())
        let result = Self.unlock("pass 0", envelope)
        #expect(result.code == "weakParameters")
        #expect(result.derived == 0)
    }

    @Test func costsAtTheCeilingWithinTheBudgetAreDerived() async throws {
        let envelope = try await Self.blob(costs: [(262_144, 3, 4)], argon2id: CountingArgon2id())
        // Edited costs give another key than the one enrolled: derived once, then no entry matches.
        let result = Self.unlock("pass 0", envelope)
        #expect(result.code == "noMatchingKey")
        #expect(result.derived == 1)
    }

    @Test func oneEntryOutOfRangeAmongSeveralRefusesTheBlob() async throws {
        // The first entry is intact and is the passphrase's own; the second was lowered below the floor. The reader
        // refuses the blob without deriving for the first (it used to derive it, match it and open).
        let argon2id = CountingArgon2id()
        let envelope = try await Self.blob(costs: [(19456, 2, 1), (19456, 1, 1)], argon2id: argon2id)
        let result = Self.unlock("pass 0", envelope)
        #expect(result.code == "weakParameters")
        #expect(result.derived == 0)
    }

    @Test func moreThanFourPassphraseEntriesAreRefusedBeforeDeriving() async throws {
        let envelope = try await Self.blob(costs: Array(repeating: (19456, 2, 1), count: 5), argon2id: CountingArgon2id())
        let result = Self.unlock("pass 4", envelope)
        #expect(result.code == "workLimitExceeded")
        #expect(result.derived == 0)
    }

    @Test func totalMemoryTimesPassesAboveTheBudgetIsRefusedBeforeDeriving() async throws {
        // Each entry is within the ceiling; together they need 2 × 786432 KiB·passes, twice the budget.
        let envelope = try await Self.blob(costs: [(262_144, 3, 1), (262_144, 3, 1)], argon2id: CountingArgon2id())
        let result = Self.unlock("pass 0", envelope)
        #expect(result.code == "workLimitExceeded")
        #expect(result.derived == 0)
        // One entry alone above the budget (m × t = 1048576) although each cost is within the ceiling.
        let single = try await Self.blob(costs: [(262_144, 4, 1)], argon2id: CountingArgon2id())
        #expect(Self.unlock("pass 0", single) == ("workLimitExceeded", 0))
    }

    @Test func fourEntriesAtTheDefaultCostsAreTheBudgetAndAreTriedInOrder() async throws {
        let argon2id = CountingArgon2id()
        var recipients: [VaultSealer.Recipient] = []
        for index in 0..<4 {
            recipients.append(
                .init(try PassphraseKEK(passphrase: "pass \(index)", costs: .default, argon2id: argon2id), label: "P\(index)"))
        }
        let blob = try await TestSupport.pair().0.create(TestSupport.plaintext, vaultID: "v", recipients: recipients).blob
        let envelope = try VaultEnvelope(parsing: blob)
        // Derives for entries 0, 1 and 2, stops at the match.
        #expect(Self.unlock("pass 2", envelope) == (nil, 3))
        // A wrong passphrase costs the whole budget once (it is already NFC, so there is no second pass).
        #expect(Self.unlock("wrong", envelope) == ("noMatchingKey", 4))
    }

    @Test func aWriterRefusesCostsNoReaderWouldDerive() throws {
        let argon2id = CountingArgon2id()
        // Within the per-cost ceiling, but m × t = 2 GiB·passes is above what one open may spend.
        #expect {
            try PassphraseKEK(passphrase: "x", costs: Argon2idCosts(memoryKiB: 262_144, iterations: 8, parallelism: 1), argon2id: argon2id)
        } throws: { ($0 as? VaultEnvelopeError)?.code.rawValue == "workLimitExceeded" }
        #expect {
            try PassphraseKEK(passphrase: "x", costs: Argon2idCosts(memoryKiB: 524_288, iterations: 2, parallelism: 1), argon2id: argon2id)
        } throws: { VaultEnvelopeError.Code.weakParameters.matches($0) }
        #expect(argon2id.count == 0)
    }

    @Test func theRFC9106LaneMinimumCannotFireInsideTheLimits() {
        // RFC 9106 wants m ≥ 8·p; the floor's memory is far above 8 × the ceiling's lanes, so no separate rule exists.
        #expect(Argon2idCosts.floor.memoryKiB >= 8 * Argon2idCosts.ceiling.parallelism)
        #expect(Argon2idCosts.default.isWithinReaderLimits)
        #expect(Argon2idCosts(memoryKiB: 262_144, iterations: 8, parallelism: 4).isWithinReaderLimits)
        #expect(!Argon2idCosts(memoryKiB: 262_145, iterations: 2, parallelism: 1).isWithinReaderLimits)
    }
}
