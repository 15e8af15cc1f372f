import Foundation
import Synchronization
import VaultCore

/// A PostgreSQL node's read-through cache of current bodies as local files, so a load of a version this node has read
/// before is sent from the page cache with `sendfile` instead of coming through libpq (issue 31).
///
/// It never decides what a load answers: the database does. A load names the version it holds for the user, the
/// query returns the user's newest row and leaves its body out only when that row is the same version, and a user's
/// sync IDs never repeat (they outlive erasure), so a cached file is served only while its own row is the newest. A
/// file holds one version's bytes and is never written again.
///
/// What it must also do is leave no erased user's bytes on the node's disk: every change announced for a user (a
/// save or an erasure, on any node, through the change feed) removes that user's file, a feed that may have missed
/// announcements removes every file, and the directory is emptied when the node starts. A load that read a body
/// while an announcement for its user arrived does not keep its file (`admit` compares the user's generation). While
/// the feed is deaf (its connection lost, or an engine without `LISTEN`, such as CockroachDB) nothing is kept, since an
/// erasure elsewhere would go unheard. Files are not synced: a crash loses nothing the database does not hold, and the
/// next start empties the directory.
public final class PostgresBodyCache: Sendable {
    /// The version a load found cached for a user, and the user's generation when it looked.
    struct Ticket {
        let tag: String
        let generation: UInt64
        let cached: Entry?
    }

    struct Entry {
        let syncID: UTCTimestamp
        let name: String
        let length: Int
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Tags in the order their files were admitted; stale tags are skipped when evicting.
        var order = AdmissionOrder<String>()
        var bytes = 0
        /// Bodies refused admission since the cache was last below its budget (`admit` keeps one in eight then).
        var refusedWhileFull = 0
        /// Bumped for a stripe of tags by each announcement for one of them, and for all by `forgetAll`.
        var generations = [UInt64](repeating: 0, count: PostgresBodyCache.stripes)
    }

    private static let stripes = 1024
    private let files: BodyFileDirectory
    private let budgetBytes: Int
    private let changeTag: @Sendable (StorageKey) -> String
    private let state = Mutex(State())
    /// Whether the change feed hears announcements: set by `forgetAll` (it listens again), cleared by `feedLost`.
    private let hearing = Atomic<Bool>(true)

    /// Opens the cache directory at `directory` (created owner-only) and removes every file in it; keeps at most
    /// `budgetBytes` of bodies, and names a user as `changeTag` does in the change feed's announcements.
    ///
    /// - Throws: `StoreError` when the directory cannot be created, opened or emptied.
    public init(
        directory: String, budgetBytes: Int, changeTag: @escaping @Sendable (StorageKey) -> String
    ) throws(StoreError) {
        files = try BodyFileDirectory(path: directory)
        try files.sweep(keeping: [])
        self.budgetBytes = budgetBytes
        self.changeTag = changeTag
    }

    /// Removes the file of the user announced under `tag` (its blob was saved or erased on some node).
    public func forget(tag: String) {
        let removed = state.withLock { state -> Entry? in
            state.generations[Self.stripe(of: tag)] &+= 1
            return Self.remove(tag, from: &state)
        }
        if let removed { files.remove([removed.name]) }
    }

    /// Removes every file and keeps none until the feed listens again (`forgetAll`): announcements, erasures among
    /// them, go unheard meanwhile.
    public func feedLost() {
        hearing.store(false, ordering: .releasing)
        forgetAll(listening: false)
    }

    /// Removes every file (announcements may have been missed; the feed listens now).
    public func forgetAll() {
        forgetAll(listening: true)
    }

    private func forgetAll(listening: Bool) {
        let removed = state.withLock { state -> [Entry] in
            for index in state.generations.indices { state.generations[index] &+= 1 }
            let all = Array(state.entries.values)
            state = State(generations: state.generations)
            return all
        }
        files.remove(removed.map(\.name))
        if listening { hearing.store(true, ordering: .releasing) }
    }

    /// The files held and their bytes (tests).
    var held: (count: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.bytes) }
    }

    /// Removes `key`'s file (this node erased the user).
    func forget(_ key: StorageKey) {
        forget(tag: changeTag(key))
    }

    /// What is cached for `key` now; taken before the query whose answer `admit` may keep.
    func ticket(for key: StorageKey) -> Ticket {
        let tag = changeTag(key)
        return state.withLock { Ticket(tag: tag, generation: $0.generations[Self.stripe(of: tag)], cached: $0.entries[tag]) }
    }

    /// The cached body of `ticket`, open for reading, or nil when it was removed since the ticket was taken.
    ///
    /// - Throws: `StoreError` when the file cannot be opened or is not the length recorded.
    func open(_ ticket: Ticket) throws(StoreError) -> BlobFile? {
        guard let cached = ticket.cached else { return nil }
        return try files.open(cached.name, length: cached.length)
    }

    /// Keeps `body` as the user's version `syncID`, unless an announcement for the user came since `ticket` was taken
    /// or the body is over a quarter of the budget; evicts the oldest files past the budget. A failed write keeps
    /// nothing and is no error: the load has its bytes.
    func admit(_ body: Data, syncID: UTCTimestamp, ticket: Ticket) {
        guard hearing.load(ordering: .acquiring), body.count <= budgetBytes / 4, takesAnother(body.count),
            let written = try? files.write(body)
        else { return }
        close(written.descriptor)
        let entry = Entry(syncID: syncID, name: written.name, length: body.count)
        let unlinked = state.withLock { state -> [String] in
            guard state.generations[Self.stripe(of: ticket.tag)] == ticket.generation else { return [written.name] }
            // Two loads of a user's new version both read its body: the later one keeps its own file.
            var unlinked = Self.remove(ticket.tag, from: &state).map { [$0.name] } ?? []
            state.entries[ticket.tag] = entry
            state.order.append(ticket.tag)
            state.bytes += entry.length
            while state.bytes > budgetBytes, let victim = state.order.takeOldest() {
                if let evicted = Self.remove(victim, from: &state) { unlinked.append(evicted.name) }
            }
            let entries = state.entries
            state.order.compact(liveCount: entries.count) { entries[$0] != nil }
            return unlinked
        }
        files.remove(unlinked)
    }

    /// Whether a body of `count` bytes may be written: always while it fits the budget; once full, one in eight.
    ///
    /// When the users' bodies do not fit (20 000 users of 64 KiB against 1 GiB), a load picks a file held at a rate of
    /// the budget over their total whatever the cache admits, and admitting every miss made a file write and an
    /// eviction of each: a fifth of the node's CPU, and loads/s 0.6 of no cache at all (`scripts/bench_loads.sh`,
    /// docs/PERFORMANCE.md). One in eight keeps what the cache holds moving to the users loaded now.
    private func takesAnother(_ count: Int) -> Bool {
        state.withLock { state in
            guard state.bytes + count > budgetBytes else {
                state.refusedWhileFull = 0
                return true
            }
            state.refusedWhileFull += 1
            return state.refusedWhileFull % 8 == 0
        }
    }

    private static func remove(_ tag: String, from state: inout State) -> Entry? {
        guard let entry = state.entries.removeValue(forKey: tag) else { return nil }
        state.bytes -= entry.length
        return entry
    }

    private static func stripe(of tag: String) -> Int {
        Int(UInt(bitPattern: tag.hashValue) % UInt(stripes))
    }
}
