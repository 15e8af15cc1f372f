import Foundation
import VaultCore

/// The save steps on one PostgreSQL connection, sent as two pipelines: a save costs two round trips, not seven.
///
/// The user's `vault_users` row, locked `FOR UPDATE`, serializes that user's saves across every
/// server node, so the rate-limit count and the compare-and-swap read what the previous save committed.
/// The first pipeline opens the transaction, takes the lock and reads the rate-limit window and the current
/// version (the reads run after the lock is granted, each with a fresh READ COMMITTED snapshot); the second
/// writes and commits. Every lock is held one round trip shorter for each statement that no longer waits for
/// its own, which is what a hot user's saves queue on.
final class PostgresSaveSteps: SaveSteps {
    let connection: PostgresConnection
    private let horizon: Int64
    private let limit: Int
    private var lockedRecentSaves: [Int64] = []
    private var lockedCurrent: StoredVault?
    /// Whether `write` committed; refused saves leave the transaction for the store to end.
    private(set) var committed = false

    /// Steps for `request`, whose rate-limit window is read together with the lock.
    init(connection: PostgresConnection, request: SaveRequest) {
        self.connection = connection
        horizon = request.rateLimit.horizon(now: request.now)
        limit = request.rateLimit.limit
    }

    func lockUser(_ key: StorageKey) throws(StoreError) -> UTCTimestamp? {
        let bytes = PostgresValue.bytes(key.bytes)
        var results = try connection.pipeline([.control("BEGIN ISOLATION LEVEL READ COMMITTED")] + lockedReads(bytes))
        if results[1].rowCount == 0 {
            // First save of this user: create the row to lock (a concurrent first save makes this a no-op),
            // then lock and read again, since the reads above ran without the lock.
            results = try connection.pipeline([.statement(.addUser, [bytes])] + lockedReads(bytes))
        }
        let locked = results[1]
        guard locked.rowCount == 1 else { throw StoreError(.corrupt, "PostgreSQL: the user row vanished while locking it") }
        let recent = results[2]
        lockedRecentSaves = []
        for row in 0..<recent.rowCount { lockedRecentSaves.append(try recent.integer(row, 0)) }
        let current = results[3]
        lockedCurrent = try Self.currentVersion(in: current)
        return locked.isNull(0, 0) ? nil : UTCTimestamp(millisecondsSinceEpoch: try locked.integer(0, 0))
    }

    /// The lock and the two reads that must follow it, after one leading step (`BEGIN` or the new user row).
    private func lockedReads(_ key: PostgresValue) -> [PostgresConnection.PipelineStep] {
        [
            .statement(.lockUser, [key]), .statement(.recentSaves, [key, .integer(horizon), .integer(Int64(limit))]),
            .statement(.currentVersion, [key]),
        ]
    }

    /// The version a `currentVersion` statement read (its header fields and write key; no body), or nil for none.
    ///
    /// - Throws: `StoreError(.corrupt)` for a sync ID that is no BIGINT.
    static func currentVersion(in result: PostgresResult) throws(StoreError) -> StoredVault? {
        guard result.rowCount > 0 else { return nil }
        return StoredVault(
            syncID: UTCTimestamp(millisecondsSinceEpoch: try result.integer(0, 0)), updatedUtc: result.text(0, 1) ?? "",
            hint: result.text(0, 2), body: Data(), writeKey: result.isNull(0, 3) ? nil : result.bytes(0, 3))
    }

    func recentSaves(_ key: StorageKey, after horizon: Int64, limit: Int) throws(StoreError) -> [Int64] {
        // Read with the lock; `SaveSteps.save` asks for the window this was built with.
        precondition(horizon == self.horizon && limit == self.limit, "the window read with the lock")
        return lockedRecentSaves
    }

    func currentVersion(_ key: StorageKey) throws(StoreError) -> StoredVault? {
        lockedCurrent
    }

    // Two statements instead of five, and the commit, in one round trip.
    // A statement modifies each table at most once, which CockroachDB requires.
    func write(_ request: SaveRequest, syncID: UTCTimestamp, keeping: Int, forgettingThrough horizon: Int64) throws(StoreError) {
        let key = PostgresValue.bytes(request.key.bytes)
        _ = try connection.pipeline([
            .statement(
                .insertVersion,
                [
                    key, .integer(syncID.millisecondsSinceEpoch), .text(request.header.updatedUtc),
                    .text(request.header.hint), .bytes(request.body),
                    .integer(request.now.millisecondsSinceEpoch), PostgresValue.bytes(request.writeKey),
                ]),
            // A new statement sees the version just inserted, so the trim counts it.
            .statement(.trimHistory, [key, .integer(Int64(keeping)), .integer(horizon)]),
            .control("COMMIT"),
        ])
        committed = true
    }
}

extension PostgresStatement {
    static let lockUser = Self(name: "lock_user", sql: "SELECT last_sync_ms FROM vault_users WHERE storage_key = $1 FOR UPDATE")
    static let addUser = Self(
        name: "add_user", sql: "INSERT INTO vault_users (storage_key) VALUES ($1) ON CONFLICT (storage_key) DO NOTHING")
    static let recentSaves = Self(
        name: "recent_saves",
        sql: """
            SELECT at_ms FROM save_events WHERE storage_key = $1 AND at_ms > $2 ORDER BY at_ms DESC LIMIT $3
            """)
    static let currentVersion = Self(
        name: "current_version",
        sql: """
            SELECT sync_ms, updated_utc, hint, write_key FROM vault_versions WHERE storage_key = $1 ORDER BY sync_ms DESC LIMIT 1
            """)
    /// Inserts the version and the save record, and moves the user's last issued sync ID.
    static let insertVersion = Self(
        name: "insert_version",
        sql: """
            WITH version AS (
                INSERT INTO vault_versions (storage_key, sync_ms, updated_utc, hint, body, write_key)
                    VALUES ($1, $2, $3, $4, $5, $7)
            ), event AS (
                INSERT INTO save_events (storage_key, at_ms) VALUES ($1, $6)
            )
            UPDATE vault_users SET last_sync_ms = $2 WHERE storage_key = $1
            """)
    /// Erases versions beyond the newest $2 and save records at or before $3.
    static let trimHistory = Self(
        name: "trim_history",
        sql: """
            WITH pruned AS (
                DELETE FROM save_events WHERE storage_key = $1 AND at_ms <= $3
            )
            DELETE FROM vault_versions WHERE storage_key = $1 AND sync_ms <= (
                SELECT sync_ms FROM vault_versions WHERE storage_key = $1 ORDER BY sync_ms DESC LIMIT 1 OFFSET $2)
            """)
}
