import Foundation
import Synchronization
import VaultCore

/// Keeps recently saved blobs in memory in front of a store this process alone writes.
///
/// A wallet loads right after another device saves, and the embedded SQLite store has exactly
/// one writer (this process), so every save can refresh the cache and no other writer can make
/// it stale. Never put it in front of a store shared by several server nodes.
///
/// Loads are not remembered by default: with many users a loaded blob is rarely loaded again before it is evicted,
/// and remembering every miss (a 64 KiB entry, and a sort of the entries to evict) cost more than the hits saved, while
/// a miss costs one read from SQLite whose file the page cache holds (docs/PERFORMANCE.md, issue 19).
public final class CachingVaultStore: VaultStore {
    private struct Entry {
        let vault: StoredVault
        var lastUse: UInt64
    }

    private struct State {
        var entries: [StorageKey: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private let base: any VaultStore
    private let budgetBytes: Int
    private let remembersLoads: Bool
    private let state = Mutex(State())

    /// Wraps `base`, keeping at most `budgetBytes` of blob bytes in memory: the blobs saved last and, when
    /// `remembersLoads`, also those loaded last.
    public init(base: any VaultStore, budgetBytes: Int = 64 * 1024 * 1024, remembersLoads: Bool = false) {
        self.base = base
        self.budgetBytes = budgetBytes
        self.remembersLoads = remembersLoads
    }

    public func load(_ key: StorageKey) throws(StoreError) -> StoredVault? {
        let hit = state.withLock { state -> StoredVault? in
            state.clock += 1
            guard var entry = state.entries[key] else { return nil }
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.vault
        }
        if let hit { return hit }
        let loaded = try base.load(key)
        if remembersLoads, let loaded { remember(loaded, for: key) }
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
            remember(StoredVault(syncID: syncID, updatedUtc: request.header.updatedUtc, hint: request.header.hint,
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

    public func delete(_ key: StorageKey) throws(StoreError) {
        // Forget first and after: a load racing the delete must not re-cache the erased blob.
        forget(key)
        defer { forget(key) }
        try base.delete(key)
    }

    public func close() {
        base.close()
    }

    public func checkReachable() throws(StoreError) {
        try base.checkReachable()
    }

    private func forget(_ key: StorageKey) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.vault.body.count }
        }
    }

    private func remember(_ vault: StoredVault, for key: StorageKey) {
        // Too large to keep: drop any older copy, which is now stale.
        guard vault.body.count <= budgetBytes / 4 else { return forget(key) }
        state.withLock { state in
            state.clock += 1
            if let old = state.entries.updateValue(Entry(vault: vault, lastUse: state.clock), forKey: key) {
                state.bytes -= old.vault.body.count
            }
            state.bytes += vault.body.count
            guard state.bytes > budgetBytes else { return }
            // Evict least recently used down to 3/4 of the budget, so eviction runs rarely.
            for (victim, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard state.bytes > budgetBytes * 3 / 4 else { break }
                state.entries[victim] = nil
                state.bytes -= entry.vault.body.count
            }
        }
    }
}
