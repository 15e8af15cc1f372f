import Foundation
import VaultCore

/// The shared store: PostgreSQL (or a compatible distributed engine) over libpq, for several server nodes.
///
/// Every request borrows a pooled connection; a save is one transaction that locks the user's row,
/// so the rate limit and compare-and-swap hold across nodes. The SQL stays within what CockroachDB
/// and YugabyteDB also accept (docs/SCALING.md).
public final class PostgresVaultStore: VaultStore {
    /// One schema change, and whether it is for PostgreSQL's own storage only.
    struct Migration {
        let sql: String
        /// Run only on PostgreSQL itself; on the compatible engines, which store values their own way, the version
        /// is recorded and nothing is run.
        var postgreSQLStorageOnly = false
    }

    /// Schema migrations in order; each runs in a transaction that also records it in `schema_migrations`.
    static let migrations: [Migration] = [
        // vault_users outlives delete so sync IDs keep increasing after an erasure, and is the row a save locks.
        Migration(
            sql: """
                CREATE TABLE vault_users (
                    storage_key BYTEA PRIMARY KEY,
                    last_sync_ms BIGINT
                );
                CREATE TABLE vault_versions (
                    storage_key BYTEA NOT NULL,
                    sync_ms BIGINT NOT NULL,
                    updated_utc TEXT NOT NULL,
                    hint TEXT,
                    body BYTEA NOT NULL,
                    PRIMARY KEY (storage_key, sync_ms)
                );
                CREATE TABLE save_events (
                    storage_key BYTEA NOT NULL,
                    at_ms BIGINT NOT NULL
                );
                CREATE INDEX save_events_by_key ON save_events (storage_key, at_ms);
                """),
        // A body is ciphertext in base64url, which no compressor shrinks by the quarter TOAST asks for; pglz still read
        // all of every saved body before giving up, 32% of the backends' CPU in the save benchmark (docs/PERFORMANCE.md).
        // EXTERNAL keeps bodies out of line and uncompressed. Rows already stored are read as they are.
        Migration(sql: "ALTER TABLE vault_versions ALTER COLUMN body SET STORAGE EXTERNAL", postgreSQLStorageOnly: true),
        // The write key each version's writer named: a save or erasure replacing the version must prove it.
        Migration(sql: "ALTER TABLE vault_versions ADD COLUMN write_key BYTEA"),
    ]

    private let pool: PostgresConnectionPool
    private let historyVersions: Int
    private let bodyCache: PostgresBodyCache?

    /// Connects to the database at a `postgresql://` URL, brings its schema up to date, keeps up to
    /// `poolSize` connections, and keeps the newest `historyVersions` (at least 1) versions per user; loads of the
    /// current version go through `bodyCache` when there is one.
    ///
    /// - Throws: `StoreError` when the database cannot be reached or its schema is newer than this server.
    public init(url: String, poolSize: Int, historyVersions: Int, bodyCache: PostgresBodyCache? = nil) throws(StoreError) {
        precondition(historyVersions >= 1 && poolSize >= 1, "checked by the configuration")
        pool = PostgresConnectionPool(url: url, size: poolSize)
        self.historyVersions = historyVersions
        self.bodyCache = bodyCache
        try pool.withConnection { connection throws(StoreError) in try Self.migrate(connection) }
    }

    public func load(_ key: StorageKey) throws(StoreError) -> StoredVault? {
        guard let bodyCache else { return try loadCurrent(key) }
        let ticket = bodyCache.ticket(for: key)
        let cachedSyncID = ticket.cached?.syncID.millisecondsSinceEpoch ?? -1
        let result = try pool.withConnection { connection throws(StoreError) in
            try connection.query(.loadCurrentUnlessCached, [.bytes(key.bytes), .integer(cachedSyncID)])
        }
        guard result.rowCount > 0 else { return nil }
        let syncID = UTCTimestamp(millisecondsSinceEpoch: try result.integer(0, 0))
        guard result.isNull(0, 3) else {
            let vault = try Self.storedVault(result)
            if let vault { bodyCache.admit(vault.body, syncID: syncID, ticket: ticket) }
            return vault
        }
        // The newest row is the version cached; its file is gone only if an announcement removed it since.
        guard let file = try bodyCache.open(ticket) else { return try loadCurrent(key) }
        return StoredVault(syncID: syncID, updatedUtc: result.text(0, 1) ?? "", hint: result.text(0, 2), content: .file(file))
    }

    /// The user's newest version with its body, from the database.
    private func loadCurrent(_ key: StorageKey) throws(StoreError) -> StoredVault? {
        try pool.withConnection { connection throws(StoreError) in
            try Self.storedVault(connection.query(.loadCurrent, [.bytes(key.bytes)]))
        }
    }

    public func load(_ key: StorageKey, syncID: UTCTimestamp) throws(StoreError) -> StoredVault? {
        try pool.withConnection { connection throws(StoreError) in
            try Self.storedVault(connection.query(.loadVersion, [.bytes(key.bytes), .integer(syncID.millisecondsSinceEpoch)]))
        }
    }

    public func versions(_ key: StorageKey) throws(StoreError) -> [StoredVersion] {
        try pool.withConnection { connection throws(StoreError) in
            let result = try connection.query(.versions, [.bytes(key.bytes)])
            var versions: [StoredVersion] = []
            for row in 0..<result.rowCount {
                versions.append(
                    StoredVersion(
                        syncID: UTCTimestamp(millisecondsSinceEpoch: try result.integer(row, 0)),
                        bytes: Int(try result.integer(row, 1)), updatedUtc: result.text(row, 2) ?? "",
                        hint: result.text(row, 3)))
            }
            return versions
        }
    }

    public func save(_ request: SaveRequest) throws(StoreError) -> SaveOutcome {
        try pool.withConnection { connection throws(StoreError) in
            // The steps open the transaction in their first pipeline and commit in their last.
            let steps = PostgresSaveSteps(connection: connection, request: request)
            do throws(StoreError) {
                let outcome = try steps.save(request, historyVersions: historyVersions)
                // A refused save wrote at most the new user's row, which the next save creates again if need be.
                if !steps.committed { try connection.execute("ROLLBACK") }
                return outcome
            } catch {
                connection.rollBackIfInTransaction()
                throw error
            }
        }
    }

    public func delete(_ key: StorageKey, proof: WriterProof?) throws(StoreError) -> EraseOutcome {
        try pool.withConnection { connection throws(StoreError) in
            let user = PostgresValue.bytes(key.bytes)
            do throws(StoreError) {
                // The user's row lock orders the erasure with every node's saves, as a save's own lock does.
                let read = try connection.pipeline([
                    .control("BEGIN ISOLATION LEVEL READ COMMITTED"), .statement(.lockUser, [user]),
                    .statement(.currentVersion, [user]),
                ])
                let stored = try PostgresSaveSteps.currentVersion(in: read[2])
                guard WriterProof.admits(proof, current: stored) else {
                    try connection.execute("ROLLBACK")
                    return .writerRefused
                }
                _ = try connection.pipeline([.statement(.deleteVersions, [user]), .control("COMMIT")])
                // Every node's cache hears of it through the change feed; this node's need not wait for that.
                bodyCache?.forget(key)
                return .erased
            } catch {
                connection.rollBackIfInTransaction()
                throw error
            }
        }
    }

    public func close() {
        pool.closeIdle()
    }

    public func checkReachable() throws(StoreError) {
        try pool.withConnection { connection throws(StoreError) in
            _ = try connection.query(.reachable, [])
        }
    }

    private static func storedVault(_ result: PostgresResult) throws(StoreError) -> StoredVault? {
        guard result.rowCount > 0 else { return nil }
        return StoredVault(
            syncID: UTCTimestamp(millisecondsSinceEpoch: try result.integer(0, 0)),
            updatedUtc: result.text(0, 1) ?? "", hint: result.text(0, 2), body: result.bytes(0, 3))
    }

    /// Runs the migrations this database lacks; nodes starting together each run a migration at most once between them.
    private static func migrate(_ connection: PostgresConnection) throws(StoreError) {
        // A node starting at the same moment may win this race; the query below fails if the table is really missing.
        try? connection.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version BIGINT PRIMARY KEY,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )
            """)
        let applied = try connection.query(.schemaVersion, []).integer(0, 0)
        guard applied <= Int64(migrations.count) else {
            throw StoreError(.corrupt, "database schema version \(applied) is newer than this server knows")
        }
        let pending = migrations.enumerated().dropFirst(Int(applied))
        guard !pending.isEmpty else { return }
        // CockroachDB says "CockroachDB CCL v…", YugabyteDB "PostgreSQL 11.2-YB-…"; neither has TOAST.
        let engine = try connection.query(.serverVersion, []).text(0, 0) ?? ""
        let isPostgreSQLItself = engine.hasPrefix("PostgreSQL ") && !engine.contains("-YB-")
        for (index, migration) in pending {
            try connection.transaction { () throws(StoreError) in
                // Claiming the version first makes a second node wait here, then find it taken and skip.
                guard try connection.query(.claimMigration, [.integer(Int64(index + 1))]).rowCount == 1 else { return }
                if isPostgreSQLItself || !migration.postgreSQLStorageOnly { try connection.execute(migration.sql) }
            }
        }
    }
}

extension PostgresStatement {
    static let loadCurrent = Self(
        name: "load_current",
        sql: """
            SELECT sync_ms, updated_utc, hint, body FROM vault_versions WHERE storage_key = $1 ORDER BY sync_ms DESC LIMIT 1
            """)
    /// The newest row, its body left out (NULL) when it is the version `$2` a node's body cache holds.
    static let loadCurrentUnlessCached = Self(
        name: "load_current_unless_cached",
        sql: """
            SELECT sync_ms, updated_utc, hint, CASE WHEN sync_ms = $2 THEN NULL ELSE body END FROM vault_versions
            WHERE storage_key = $1 ORDER BY sync_ms DESC LIMIT 1
            """)
    static let loadVersion = Self(
        name: "load_version",
        sql: """
            SELECT sync_ms, updated_utc, hint, body FROM vault_versions WHERE storage_key = $1 AND sync_ms = $2
            """)
    static let versions = Self(
        name: "versions",
        sql: """
            SELECT sync_ms, octet_length(body)::BIGINT, updated_utc, hint FROM vault_versions WHERE storage_key = $1
            ORDER BY sync_ms DESC
            """)
    static let deleteVersions = Self(name: "delete_versions", sql: "DELETE FROM vault_versions WHERE storage_key = $1")
    static let reachable = Self(name: "reachable", sql: "SELECT 1")
    static let schemaVersion = Self(name: "schema_version", sql: "SELECT coalesce(max(version), 0) FROM schema_migrations")
    static let serverVersion = Self(name: "server_version", sql: "SELECT version()")
    static let claimMigration = Self(
        name: "claim_migration",
        sql: """
            INSERT INTO schema_migrations (version) VALUES ($1) ON CONFLICT (version) DO NOTHING RETURNING version
            """)
}
