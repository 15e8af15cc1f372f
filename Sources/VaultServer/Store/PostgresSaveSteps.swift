import Foundation
import VaultCore

/// The save steps on one PostgreSQL connection inside an open transaction.
///
/// The user's `vault_users` row, locked `FOR UPDATE`, serializes that user's saves across every
/// server node, so the rate-limit count and the compare-and-swap read what the previous save committed.
struct PostgresSaveSteps: SaveSteps {
    let connection: PostgresConnection

    func lockUser(_ key: StorageKey) throws(StoreError) -> UTCTimestamp? {
        var locked = try connection.query(.lockUser, [.bytes(key.bytes)])
        if locked.rowCount == 0 {
            // First save of this user: create the row to lock; a concurrent first save makes this a no-op.
            _ = try connection.query(.addUser, [.bytes(key.bytes)])
            locked = try connection.query(.lockUser, [.bytes(key.bytes)])
        }
        guard locked.rowCount == 1 else { throw StoreError(.corrupt, "PostgreSQL: the user row vanished while locking it") }
        return locked.isNull(0, 0) ? nil : UTCTimestamp(millisecondsSinceEpoch: try locked.integer(0, 0))
    }

    func recentSaves(_ key: StorageKey, after horizon: Int64, limit: Int) throws(StoreError) -> [Int64] {
        let result = try connection.query(.recentSaves, [.bytes(key.bytes), .integer(horizon), .integer(Int64(limit))])
        var instants: [Int64] = []
        for row in 0..<result.rowCount { instants.append(try result.integer(row, 0)) }
        return instants
    }

    func currentVersion(_ key: StorageKey) throws(StoreError) -> StoredVault? {
        let result = try connection.query(.currentVersion, [.bytes(key.bytes)])
        guard result.rowCount > 0 else { return nil }
        return StoredVault(syncID: UTCTimestamp(millisecondsSinceEpoch: try result.integer(0, 0)),
                           updatedUtc: result.text(0, 1) ?? "", hint: result.text(0, 2), body: Data())
    }

    // Two statements instead of five: each round trip holds the user's row lock a little longer.
    // A statement modifies each table at most once, which CockroachDB requires.
    func write(_ request: SaveRequest, syncID: UTCTimestamp, keeping: Int, forgettingThrough horizon: Int64) throws(StoreError) {
        let key = PostgresValue.bytes(request.key.bytes)
        _ = try connection.query(.insertVersion, [key, .integer(syncID.millisecondsSinceEpoch), .text(request.header.updatedUtc),
                                                  .text(request.header.hint), .bytes(request.body),
                                                  .integer(request.now.millisecondsSinceEpoch)])
        // A new statement sees the version just inserted, so the trim counts it.
        _ = try connection.query(.trimHistory, [key, .integer(Int64(keeping)), .integer(horizon)])
    }
}

extension PostgresStatement {
    static let lockUser = Self(name: "lock_user", sql: "SELECT last_sync_ms FROM vault_users WHERE storage_key = $1 FOR UPDATE")
    static let addUser = Self(name: "add_user", sql: "INSERT INTO vault_users (storage_key) VALUES ($1) ON CONFLICT (storage_key) DO NOTHING")
    static let recentSaves = Self(name: "recent_saves", sql: """
        SELECT at_ms FROM save_events WHERE storage_key = $1 AND at_ms > $2 ORDER BY at_ms DESC LIMIT $3
        """)
    static let currentVersion = Self(name: "current_version", sql: """
        SELECT sync_ms, updated_utc, hint FROM vault_versions WHERE storage_key = $1 ORDER BY sync_ms DESC LIMIT 1
        """)
    /// Inserts the version and the save record, and moves the user's last issued sync ID.
    static let insertVersion = Self(name: "insert_version", sql: """
        WITH version AS (
            INSERT INTO vault_versions (storage_key, sync_ms, updated_utc, hint, body) VALUES ($1, $2, $3, $4, $5)
        ), event AS (
            INSERT INTO save_events (storage_key, at_ms) VALUES ($1, $6)
        )
        UPDATE vault_users SET last_sync_ms = $2 WHERE storage_key = $1
        """)
    /// Erases versions beyond the newest $2 and save records at or before $3.
    static let trimHistory = Self(name: "trim_history", sql: """
        WITH pruned AS (
            DELETE FROM save_events WHERE storage_key = $1 AND at_ms <= $3
        )
        DELETE FROM vault_versions WHERE storage_key = $1 AND sync_ms <= (
            SELECT sync_ms FROM vault_versions WHERE storage_key = $1 ORDER BY sync_ms DESC LIMIT 1 OFFSET $2)
        """)
}
