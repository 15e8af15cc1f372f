import Foundation
import Synchronization
import VaultCore

/// Keeps recently saved and loaded blobs in memory in front of a store this process alone writes.
///
/// A wallet loads right after another device saves, and the embedded SQLite store has exactly
/// one writer (this process), so every save can refresh the cache and no other writer can make
/// it stale. Never put it in front of a store shared by several server nodes.
public final class CachingVaultStore: VaultStore {
    private struct Entry {
        let vault: StoredVault
        /// Set by a hit, cleared when eviction passes over the entry: a second chance (CLOCK).
        var referenced: Bool
    }

    /// The saves and erasures of one key under way now.
    private struct Writers {
        var count: Int
        /// Set when a second write of the key began while one was under way: none of them may then leave its blob
        /// behind, since which one the store applied last is not known here.
        var contended: Bool
    }

    private struct State {
        var entries: [StorageKey: Entry] = [:]
        /// Keys in the order they were admitted; may hold keys already gone, skipped on eviction.
        var order = AdmissionOrder<StorageKey>()
        var bytes = 0
        var writers: [StorageKey: Writers] = [:]
        /// Writes begun so far: a load admits what it read only if no write began while it read.
        var writesBegun = 0
    }

    private let base: any VaultStore
    private let budgetBytes: Int
    private let remembersLoads: Bool
    private let state = Mutex(State())

    /// Wraps `base`, keeping at most `budgetBytes` of blob bytes in memory: the blobs saved last and, when
    /// `remembersLoads`, loaded blobs while there is room for them. A load never evicts: when the users' blobs do not
    /// fit, a loaded blob is rarely loaded again before it would be evicted, and admitting every miss churned 64 KiB
    /// buffers through the cache and the allocator for a hit rate of the budget over the data (5% at 20 000 users),
    /// which cost more than it saved (docs/PERFORMANCE.md, issue 19). When they fit, every load after the first hits.
    ///
    /// Eviction is CLOCK (second chance): the oldest admitted entry goes first unless a hit marked it since, and each
    /// eviction costs O(1). The LRU before it sorted every entry by last use, under the lock, once per quarter budget of
    /// new blobs: at 20 000 users, where almost every load was a miss, that sort and the waits on its lock were a tenth
    /// of a load (docs/PERFORMANCE.md, issue 19).
    public init(base: any VaultStore, budgetBytes: Int = 64 * 1024 * 1024, remembersLoads: Bool = true) {
        self.base = base
        self.budgetBytes = budgetBytes
        self.remembersLoads = remembersLoads
    }

    public func load(_ key: StorageKey) throws(StoreError) -> StoredVault? {
        // A miss remembers what it read only if no write of the key was under way when it began (it may have read the
        // version before that write) and none began since (that write's version, or its erasure, would be older than
        // what the load puts back): a load that read v1 just before a save of v2 or an erasure committed would
        // otherwise leave v1 to be served after both were answered.
        let (hit, admissible, writesBegun) = state.withLock { state -> (StoredVault?, Bool, Int) in
            guard let entry = state.entries[key] else { return (nil, state.writers[key] == nil, state.writesBegun) }
            if !entry.referenced { state.entries[key]?.referenced = true }
            return (entry.vault, false, state.writesBegun)
        }
        if let hit { return hit }
        let loaded = try base.load(key)
        // A body in a file is sent from the page cache without being read (issue 31): reading it in to cache it would
        // be the copy that avoids.
        if remembersLoads, admissible, let loaded, case .bytes = loaded.content {
            state.withLock { state in
                guard state.writesBegun == writesBegun else { return }
                remember(loaded, for: key, evicting: false, in: &state)
            }
        }
        return loaded
    }

    public func save(_ request: SaveRequest) throws(StoreError) -> SaveOutcome {
        beginWrite(request.key)
        let outcome: SaveOutcome
        do {
            outcome = try base.save(request)
        } catch {
            // A failed save may or may not have committed; forget rather than guess.
            endWrite(request.key, leaving: .nothing)
            throw error
        }
        switch outcome {
        case .saved(let syncID, _):
            let vault = StoredVault(
                syncID: syncID, updatedUtc: request.header.updatedUtc, hint: request.header.hint, body: request.body)
            endWrite(request.key, leaving: .version(vault))
        default:
            endWrite(request.key, leaving: .unchanged)
        }
        return outcome
    }

    public func load(_ key: StorageKey, syncID: UTCTimestamp) throws(StoreError) -> StoredVault? {
        try base.load(key, syncID: syncID)
    }

    public func versions(_ key: StorageKey) throws(StoreError) -> [StoredVersion] {
        try base.versions(key)
    }

    public func delete(_ key: StorageKey, proof: WriterProof?) throws(StoreError) -> EraseOutcome {
        // Counted as a write: a save or load racing the erasure must not leave the erased blob behind.
        beginWrite(key)
        state.withLock { forget(key, in: &$0) }
        defer { endWrite(key, leaving: .nothing) }
        return try base.delete(key, proof: proof)
    }

    public func close() {
        base.close()
    }

    public func checkReachable() throws(StoreError) {
        try base.checkReachable()
    }

    /// Blobs held, and their bytes (tests).
    var held: (count: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.bytes) }
    }

    /// What a write leaves in the cache when it ends.
    private enum Leaving {
        /// The key's entry as it was (a refused save changed nothing).
        case unchanged
        /// This version, the store's newest if no other write of the key overlapped.
        case version(StoredVault)
        /// No entry: an erasure, or a save whose outcome is not known.
        case nothing
    }

    private func beginWrite(_ key: StorageKey) {
        state.withLock { state in
            state.writesBegun &+= 1
            if var writers = state.writers[key] {
                writers.count += 1
                writers.contended = true
                state.writers[key] = writers
            } else {
                state.writers[key] = Writers(count: 1, contended: false)
            }
        }
    }

    /// Ends a write begun by `beginWrite`. Overlapping writes of one key forget it too:
    /// two saves that commit in one order can reach here in the other, and a save that committed just before an
    /// erasure can reach here after it.
    private func endWrite(_ key: StorageKey, leaving: Leaving) {
        state.withLock { state in
            guard var writers = state.writers[key] else { return }
            writers.count -= 1
            state.writers[key] = writers.count == 0 ? nil : writers
            switch leaving {
            case .unchanged where !writers.contended: return
            case .version(let vault) where !writers.contended: remember(vault, for: key, evicting: true, in: &state)
            case .unchanged, .version, .nothing: forget(key, in: &state)
            }
        }
    }

    private func forget(_ key: StorageKey, in state: inout State) {
        if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.vault.byteCount }
    }

    /// Keeps `vault` for `key`; a loaded blob (`evicting` false) only if it fits without evicting anything.
    private func remember(_ vault: StoredVault, for key: StorageKey, evicting: Bool, in state: inout State) {
        // Too large to keep: drop any older copy, which is now stale.
        guard vault.byteCount <= budgetBytes / 4 else { return forget(key, in: &state) }
        if !evicting, state.entries[key] == nil, state.bytes + vault.byteCount > budgetBytes { return }
        if let old = state.entries.updateValue(Entry(vault: vault, referenced: false), forKey: key) {
            state.bytes -= old.vault.byteCount
            state.entries[key]?.referenced = old.referenced
        } else {
            state.order.append(key)
        }
        state.bytes += vault.byteCount
        while state.bytes > budgetBytes, let victim = state.order.takeOldest() {
            guard let entry = state.entries[victim] else { continue }  // forgotten since it was queued
            if entry.referenced {
                state.entries[victim]?.referenced = false
                state.order.append(victim)
            } else {
                state.entries[victim] = nil
                state.bytes -= entry.vault.byteCount
            }
        }
        let entries = state.entries
        state.order.compact(liveCount: entries.count) { entries[$0] != nil }
    }
}
