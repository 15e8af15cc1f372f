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

    func insertVersion(_ request: SaveRequest, syncID: UTCTimestamp) throws(StoreError) {
        let key = PostgresValue.bytes(request.key.bytes), sync = PostgresValue.integer(syncID.millisecondsSinceEpoch)
        _ = try connection.query(.insertVersion, [key, sync, .text(request.header.updatedUtc), .text(request.header.hint),
                                                  .bytes(request.body)])
        _ = try connection.query(.setLastSyncID, [key, sync])
    }

    func trimVersions(_ key: StorageKey, keeping count: Int) throws(StoreError) {
        _ = try connection.query(.trimVersions, [.bytes(key.bytes), .integer(Int64(count))])
    }

    func recordSave(_ key: StorageKey, at instant: Int64, forgettingThrough horizon: Int64) throws(StoreError) {
        _ = try connection.query(.recordSave, [.bytes(key.bytes), .integer(instant)])
        _ = try connection.query(.pruneSaves, [.bytes(key.bytes), .integer(horizon)])
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
    static let insertVersion = Self(name: "insert_version", sql: """
        INSERT INTO vault_versions (storage_key, sync_ms, updated_utc, hint, body) VALUES ($1, $2, $3, $4, $5)
        """)
    static let setLastSyncID = Self(name: "set_last_sync_id", sql: "UPDATE vault_users SET last_sync_ms = $2 WHERE storage_key = $1")
    static let trimVersions = Self(name: "trim_versions", sql: """
        DELETE FROM vault_versions WHERE storage_key = $1 AND sync_ms <= (
            SELECT sync_ms FROM vault_versions WHERE storage_key = $1 ORDER BY sync_ms DESC LIMIT 1 OFFSET $2)
        """)
    static let recordSave = Self(name: "record_save", sql: "INSERT INTO save_events (storage_key, at_ms) VALUES ($1, $2)")
    static let pruneSaves = Self(name: "prune_saves", sql: "DELETE FROM save_events WHERE storage_key = $1 AND at_ms <= $2")
}
