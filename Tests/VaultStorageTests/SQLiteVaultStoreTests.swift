import Foundation
import Testing
import VaultCore
import VaultTestSupport
import VaultWire

@testable import VaultStorage

/// What only the SQLite store has: a file that outlives the process and a schema that predates history.
@Suite("SQLite store")
struct SQLiteVaultStoreTests {
    let path = ScratchDirectory.path("store", suffix: "sqlite")
    let key = StorageKey(bytes: Data(repeating: 9, count: 32))

    func request(_ body: String, at milliseconds: Int64, limit: Int = 60, for user: StorageKey? = nil) -> SaveRequest {
        SaveRequest(
            key: user ?? key, body: Data(body.utf8),
            header: VaultBlobHeader(
                updatedUtc: "2026-08-12T19:00:00Z", updatedAt: UTCTimestamp(millisecondsSinceEpoch: 0),
                hint: "h", kekIDs: ["k"], cipherByteCount: 1),
            precondition: .none, rateLimit: SlidingWindowRateLimit(limit: limit),
            now: UTCTimestamp(millisecondsSinceEpoch: milliseconds))
    }

    @Test func persistsAcrossReopen() throws {
        do {
            let store = try SQLiteVaultStore(path: path, historyVersions: 10)
            _ = try store.save(request("one", at: 1000))
            _ = try store.save(request("two", at: 2000))
        }
        let reopened = try SQLiteVaultStore(path: path, historyVersions: 10)
        #expect(try reopened.load(key)?.body == Data("two".utf8))
        #expect(try reopened.versions(key).map(\.syncID.millisecondsSinceEpoch) == [2000, 1000])
    }

    @Test func migratesABlobStoredBeforeHistoryExisted() throws {
        do {
            let old = try SQLiteConnection(path: path)
            try old.execute(SQLiteVaultStore.migrations[0])
            try old.execute("PRAGMA user_version = 1")
            try old.prepare("INSERT INTO vault_blobs (storage_key, sync_ms, updated_utc, hint, body) VALUES (?, ?, ?, ?, ?)")
                .run([.blob(key.bytes), .integer(9000), .text("2026-01-01T00:00:00Z"), .null, .blob(Data("old".utf8))])
            try old.prepare("INSERT INTO save_events (storage_key, at_ms) VALUES (?, ?)").run([.blob(key.bytes), .integer(9000)])
        }
        let store = try SQLiteVaultStore(path: path, historyVersions: 10)
        #expect(
            try store.load(key)
                == StoredVault(
                    syncID: UTCTimestamp(millisecondsSinceEpoch: 9000), updatedUtc: "2026-01-01T00:00:00Z",
                    hint: nil, body: Data("old".utf8)))
        // The old save still counts toward the cap, and the next sync ID follows the migrated one.
        guard case .saved(let syncID, .allowed(remaining: 0)) = try store.save(request("new", at: 5000, limit: 2)) else {
            Issue.record("save after migration")
            return
        }
        #expect(syncID.millisecondsSinceEpoch == 9001)
        #expect(try store.versions(key).count == 2)
    }

    @Test func refusesASchemaFromTheFuture() throws {
        do {
            let future = try SQLiteConnection(path: path)
            try future.execute("PRAGMA user_version = \(SQLiteVaultStore.migrations.count + 1)")
        }
        #expect(throws: StoreError.self) { try SQLiteVaultStore(path: path, historyVersions: 10) }
    }

    /// Checkpoints run off the save path, yet they do run: the saves reach the database file itself, not only the log.
    @Test func backgroundCheckpointsCopyTheLogIntoTheDatabase() async throws {
        let body = String(repeating: "x", count: 65_536)
        let users = (0..<400).map { StorageKey(bytes: Data([UInt8($0 % 256), UInt8($0 / 256)] + Array(repeating: 1, count: 30))) }
        // 400 synced saves and a wait of up to 60 s: on a thread of its own, off the cooperative pool.
        let (checkpointed, reopenedBodies) = try await onOwnThread { [self] in
            let store = try SQLiteVaultStore(path: path, historyVersions: 10)
            for (index, user) in users.enumerated() {
                _ = try store.save(request(body, at: Int64(index + 1) * 1000, for: user))
            }
            // 400 commits write well over the 1 000 log pages that start a checkpoint (each rewrites the leaf pages of
            // the version, user and save-event rows and their indexes; the bodies themselves are in files). The rows a copy of the database file alone holds are the checkpointed ones.
            let copy = ScratchDirectory.path("checkpointed", suffix: "sqlite")
            func rowsInTheFileAlone() -> Int64 {
                try? FileManager.default.removeItem(atPath: copy)
                guard (try? FileManager.default.copyItem(atPath: path, toPath: copy)) != nil,
                    let counted = try? SQLiteConnection(path: copy).prepare("SELECT count(*) FROM vault_versions")
                        .query([], row: { $0.integer(0) })
                else { return 0 }
                return counted.first ?? 0
            }
            // A bound for a loaded machine (the full parallel run starves the checkpoint thread), not a measure: on a
            // quiet one the rows are there within a second.
            let deadline = Date().addingTimeInterval(60)
            while rowsInTheFileAlone() < 100 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            let checkpointed = rowsInTheFileAlone()
            store.close()
            let reopened = try SQLiteVaultStore(path: path, historyVersions: 10)
            return (checkpointed, try users.map { try reopened.load($0)?.body.count })
        }
        #expect(checkpointed >= 100, "the database file alone holds \(checkpointed) versions")
        #expect(reopenedBodies.allSatisfy { $0 == 65_536 })
    }

    @Test func newDatabasesUseSixteenKiBPages() throws {
        _ = try SQLiteVaultStore(path: path, historyVersions: 10)
        let pageSize = try SQLiteConnection(path: path).prepare("PRAGMA page_size").query([]) { $0.integer(0) }.first
        #expect(pageSize == 16_384)
    }
}
