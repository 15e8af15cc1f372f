import Foundation
import Synchronization
import VaultCore
import VaultCrypto
import VaultStorage

/// The long-polls waiting for a user's blob to change, by change tag, and the caps on how many may wait.
///
/// A change announced by the feed calls each waiter's re-check; a waiter stays until its request is answered (by a
/// re-check that finds a new version, at its deadline, at a drain, or when its client goes). A generation per stripe of
/// tags closes the gap between a long-poll's first read and its registration: a change announced in between moves the
/// generation, and the waiter re-checks at once.
final class LongPollHub: Sendable {
    /// Why a long-poll was refused.
    enum Refusal: Error {
        /// The user has `perUser` long-polls waiting.
        case userFull
        /// The node has `total` long-polls waiting.
        case nodeFull
    }

    private struct Waiter {
        let tag: String
        var recheck: (@Sendable () -> Void)?
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var byTag: [String: Set<UInt64>] = [:]
        var generations = [UInt64](repeating: 0, count: LongPollHub.stripes)
        var nextTicket: UInt64 = 1
    }

    /// Tags share this many generation counters: a change to one tag makes the others of its stripe re-check for
    /// nothing, never miss one.
    static let stripes = 4096

    /// Most waiting for one user, and on this node.
    let perUser: Int
    let total: Int
    private let state = Mutex(State())
    private let metrics: ServerMetrics

    init(perUser: Int, total: Int, metrics: ServerMetrics) {
        self.perUser = perUser
        self.total = total
        self.metrics = metrics
        metrics.longPollLimits(perUser: perUser, total: total)
    }

    /// The tag announcements name a user by: a hash of the storage key, which is itself a keyed hash of the user's
    /// identity, so a notification payload says nothing about who saved.
    static func changeTag(of key: StorageKey) -> String {
        let digest = SHA256.hash(data: key.bytes)
        return LowercaseHex.encode(digest.prefix(16))
    }

    /// The generation of `tag`'s stripe now; read before the first load of a long-poll.
    func generation(of tag: String) -> UInt64 {
        state.withLock { $0.generations[Self.stripe(of: tag)] }
    }

    /// Admits a long-poll for `tag` within the caps, returning its ticket; it waits once `watch` gives its re-check.
    ///
    /// - Throws: `Refusal` past a cap.
    func admit(_ tag: String) throws(Refusal) -> UInt64 {
        let admitted = state.withLock { state -> Result<UInt64, Refusal> in
            guard state.waiters.count < total else { return .failure(.nodeFull) }
            guard (state.byTag[tag]?.count ?? 0) < perUser else { return .failure(.userFull) }
            let ticket = state.nextTicket
            state.nextTicket += 1
            state.waiters[ticket] = Waiter(tag: tag)
            state.byTag[tag, default: []].insert(ticket)
            return .success(ticket)
        }
        switch admitted {
        case .success(let ticket):
            metrics.longPollChanged(by: 1)
            return ticket
        case .failure(let refusal):
            metrics.longPollRefused()
            throw refusal
        }
    }

    /// Gives an admitted ticket its re-check; returns whether `tag` changed since `generation` (then re-check now).
    func watch(_ ticket: UInt64, since generation: UInt64, recheck: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard let waiter = state.waiters[ticket] else { return false }
            state.waiters[ticket]?.recheck = recheck
            return state.generations[Self.stripe(of: waiter.tag)] != generation
        }
    }

    /// Ends a ticket, once its request is answered.
    func leave(_ ticket: UInt64) {
        let left = state.withLock { state -> Bool in
            guard let waiter = state.waiters.removeValue(forKey: ticket) else { return false }
            state.byTag[waiter.tag]?.remove(ticket)
            if state.byTag[waiter.tag]?.isEmpty == true { state.byTag[waiter.tag] = nil }
            return true
        }
        if left { metrics.longPollChanged(by: -1) }
    }

    /// A change to `tag` was announced: its waiters re-check.
    func changed(_ tag: String) {
        let rechecks = state.withLock { state -> [@Sendable () -> Void] in
            state.generations[Self.stripe(of: tag)] &+= 1
            return (state.byTag[tag] ?? []).compactMap { state.waiters[$0]?.recheck }
        }
        for recheck in rechecks { recheck() }
    }

    /// Announcements may have been missed: every waiter re-checks.
    func changedEverywhere() {
        let rechecks = state.withLock { state -> [@Sendable () -> Void] in
            for index in state.generations.indices { state.generations[index] &+= 1 }
            return state.waiters.values.compactMap(\.recheck)
        }
        for recheck in rechecks { recheck() }
    }

    /// Long-polls waiting now.
    var waiting: Int { state.withLock { $0.waiters.count } }

    private static func stripe(of tag: String) -> Int {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in tag.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        return Int(hash % UInt64(stripes))
    }
}
