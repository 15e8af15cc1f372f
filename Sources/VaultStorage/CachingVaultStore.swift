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

    private struct State {
        var entries: [StorageKey: Entry] = [:]
        /// Keys in the order they were admitted; may hold keys already gone, skipped on eviction.
        var order = AdmissionOrder<StorageKey>()
        var bytes = 0
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
        let hit = state.withLock { state -> StoredVault? in
            guard let entry = state.entries[key] else { return nil }
            if !entry.referenced { state.entries[key]?.referenced = true }
            return entry.vault
        }
        if let hit { return hit }
        let loaded = try base.load(key)
        // A body in a file is sent from the page cache without being read (issue 31): reading it in to cache it would
        // be the copy that avoids.
        if remembersLoads, let loaded, case .bytes = loaded.content { remember(loaded, for: key, evicting: false) }
        return loaded
    }

    public func save(_ request: SaveRequest) throws(StoreError) -> SaveOutcome {
        // A failed save may or may not have committed; forget rather than guess.
        let outcome: SaveOutcome
        do {
            outcome = try base.save(request)
        } catch {
            forget(request.key)
            throw error
        }
        if case .saved(let syncID, _) = outcome {
            remember(
                StoredVault(
                    syncID: syncID, updatedUtc: request.header.updatedUtc, hint: request.header.hint,
                    body: request.body), for: request.key)
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
        // Forget first and after: a load racing the delete must not re-cache the erased blob.
        forget(key)
        defer { forget(key) }
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

    private func forget(_ key: StorageKey) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.vault.byteCount }
        }
    }

    /// Keeps `vault` for `key`; a loaded blob (`evicting` false) only if it fits without evicting anything.
    private func remember(_ vault: StoredVault, for key: StorageKey, evicting: Bool = true) {
        // Too large to keep: drop any older copy, which is now stale.
        guard vault.byteCount <= budgetBytes / 4 else { return forget(key) }
        state.withLock { state in
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
}
