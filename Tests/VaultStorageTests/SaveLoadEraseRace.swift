import Foundation
import Synchronization
import Testing
import VaultCore
import VaultTestSupport

@testable import VaultStorage

/// One user saved twice and erased, round after round, on one thread while three others load it: no load may serve a
/// torn body, an erased one, or a version older than one a save had returned before the load began.
final class SaveLoadEraseRace: Sendable {
    /// What one load saw, or what one save stored.
    struct Observation: Sendable {
        /// The phase before the load began and after it returned.
        let before: Int
        let after: Int
        /// The newest version a save had returned before the load began (milliseconds; 0 for none).
        let acknowledgedBefore: Int64
        let syncID: UTCTimestamp?
        let body: Data?
    }

    let store: any VaultStore
    let key: StorageKey
    let rounds: Int
    let request: @Sendable (Data, Int64) -> SaveRequest
    /// Odd: a save may be visible; even: the last erasure returned and no save has begun since.
    let phase = Atomic<Int>(0)
    let done = Atomic<Bool>(false)
    /// The sync ID of the last save that returned, in milliseconds.
    let acknowledged = Atomic<Int64>(0)

    init(store: any VaultStore, key: StorageKey, rounds: Int, request: @escaping @Sendable (Data, Int64) -> SaveRequest) {
        self.store = store
        self.key = key
        self.rounds = rounds
        self.request = request
    }

    /// Runs the race on `store` for `rounds` rounds and records an issue for every load that served what it must not;
    /// `request` makes the save of a body at a time in milliseconds.
    static func run(
        store: any VaultStore, key: StorageKey, rounds: Int, request: @escaping @Sendable (Data, Int64) -> SaveRequest
    ) async throws {
        let race = SaveLoadEraseRace(store: store, key: key, rounds: rounds, request: request)
        let results = try await onOwnThread {
            concurrently(4) { index in Result { index == 0 ? try race.saveAndErase() : try race.loadUntilDone() } }
        }
        let saved = Dictionary(try results[0].get().map { ($0.syncID!, $0.body!) }, uniquingKeysWith: { first, _ in first })
        #expect(saved.count == 2 * rounds)
        for loader in results.dropFirst() {
            for seen in try loader.get() {
                if seen.before == seen.after && seen.before % 2 == 0 {
                    #expect(seen.syncID == nil, "a load after an erasure served version \(seen.syncID!)")
                }
                guard let syncID = seen.syncID else { continue }
                #expect(seen.body == saved[syncID], "version \(syncID) was served with other bytes")
                #expect(
                    syncID.millisecondsSinceEpoch >= seen.acknowledgedBefore,
                    "a load begun after version \(seen.acknowledgedBefore) was saved served the older \(syncID)")
            }
        }
        #expect(try store.load(key) == nil)
    }

    /// Two saves and an erasure per round; each save is loaded back by the writer before the next step.
    func saveAndErase() throws -> [Observation] {
        defer { done.store(true, ordering: .releasing) }
        var saved: [Observation] = []
        for round in 0..<rounds {
            phase.store(2 * round + 1, ordering: .releasing)
            for step in 0..<2 {
                let body = SQLiteBodyFileTests.body("race-\(round)-\(step)", count: 8_192 + round * 97)
                guard case .saved(let syncID, _) = try store.save(request(body, Int64(round * 10 + step + 1) * 1000)) else {
                    throw StoreError(.corrupt, "a save was refused")
                }
                acknowledged.store(syncID.millisecondsSinceEpoch, ordering: .releasing)
                saved.append(Observation(before: 0, after: 0, acknowledgedBefore: 0, syncID: syncID, body: body))
                guard let own = try store.load(key), own.syncID == syncID, own.body == body else {
                    throw StoreError(.corrupt, "the writer's load after its save did not find it")
                }
            }
            guard try store.delete(key, proof: nil) == .erased else { throw StoreError(.corrupt, "an erasure was refused") }
            phase.store(2 * round + 2, ordering: .releasing)
        }
        return saved
    }

    /// Loads until the writer is done, reading each body through the descriptor the load handed over, as the
    /// transport sends it.
    func loadUntilDone() throws -> [Observation] {
        var seen: [Observation] = []
        while !done.load(ordering: .acquiring) {
            let acknowledgedBefore = acknowledged.load(ordering: .acquiring)
            let before = phase.load(ordering: .acquiring)
            let loaded = try store.load(key)
            let after = phase.load(ordering: .acquiring)
            let body: Data? =
                switch loaded?.content {
                case .file(let file): try file.read()
                case .bytes(let bytes): bytes
                case nil: nil
                }
            seen.append(
                Observation(
                    before: before, after: after, acknowledgedBefore: acknowledgedBefore, syncID: loaded?.syncID, body: body))
        }
        return seen
    }
}
