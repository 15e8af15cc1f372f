import Foundation
import VaultCore

/// The SQLite write connection with its prepared statements: the save steps and the erasure.
final class SQLiteWriter: SaveSteps, @unchecked Sendable {
    /// The instants of a user's newest `?3` saves after `?2`: what the hourly cap counts.
    static let recentSavesSQL = "SELECT at_ms FROM save_events WHERE storage_key = ? AND at_ms > ? ORDER BY at_ms DESC LIMIT ?"
    /// A user's newest version: its stamp, header fields and write key (`currentVersion(of:)` reads the row).
    static let currentVersionSQL =
        "SELECT sync_ms, updated_utc, hint, write_key FROM vault_versions WHERE storage_key = ? ORDER BY sync_ms DESC LIMIT 1"

    // @unchecked: used only while holding the store's writer lock.
    let connection: SQLiteConnection
    private let lastSyncID: SQLiteStatement
    private let recentSaves: SQLiteStatement
    private let current: SQLiteStatement
    private let insertVersion: SQLiteStatement
    private let setLastSyncID: SQLiteStatement
    private let trimVersions: SQLiteStatement
    private let recordSave: SQLiteStatement
    private let pruneSaves: SQLiteStatement
    private let deleteVersions: SQLiteStatement
    /// The body file of the save being run (`BodyFileDirectory.write`), which its row names; set before each save.
    var bodyFile = ""
    /// Body files of the rows deleted since the last `takeRemovedBodyFiles`, to remove once that deletion commits.
    private var removedBodyFiles: [String] = []

    init(_ connection: SQLiteConnection) throws(StoreError) {
        self.connection = connection
        lastSyncID = try connection.prepare("SELECT last_sync_ms FROM vault_users WHERE storage_key = ?")
        recentSaves = try connection.prepare(Self.recentSavesSQL)
        current = try connection.prepare(Self.currentVersionSQL)
        insertVersion = try connection.prepare(
            """
            INSERT INTO vault_versions (storage_key, sync_ms, updated_utc, hint, body, write_key, body_file, body_bytes)
            VALUES (?, ?, ?, ?, x'', ?, ?, ?)
            """)
        setLastSyncID = try connection.prepare(
            """
            INSERT INTO vault_users (storage_key, last_sync_ms) VALUES (?, ?)
            ON CONFLICT (storage_key) DO UPDATE SET last_sync_ms = excluded.last_sync_ms
            """)
        trimVersions = try connection.prepare(
            """
            DELETE FROM vault_versions WHERE storage_key = ?1 AND sync_ms <= (
                SELECT sync_ms FROM vault_versions WHERE storage_key = ?1 ORDER BY sync_ms DESC LIMIT 1 OFFSET ?2)
            RETURNING body_file
            """)
        recordSave = try connection.prepare("INSERT INTO save_events (storage_key, at_ms) VALUES (?, ?)")
        pruneSaves = try connection.prepare("DELETE FROM save_events WHERE storage_key = ? AND at_ms <= ?")
        deleteVersions = try connection.prepare("DELETE FROM vault_versions WHERE storage_key = ? RETURNING body_file")
    }

    // The whole database is write-locked by BEGIN IMMEDIATE, so "locking" the user is just reading its row.
    func lockUser(_ key: StorageKey) throws(StoreError) -> UTCTimestamp? {
        try lastSyncID.query([.blob(key.bytes)]) { row in
            row.isNull(0) ? nil : UTCTimestamp(millisecondsSinceEpoch: row.integer(0))
        }.first ?? nil
    }

    func recentSaves(_ key: StorageKey, after horizon: Int64, limit: Int) throws(StoreError) -> [Int64] {
        try recentSaves.query([.blob(key.bytes), .integer(horizon), .integer(Int64(limit))]) { $0.integer(0) }
    }

    func currentVersion(_ key: StorageKey) throws(StoreError) -> StoredVault? {
        try current.query([.blob(key.bytes)], row: Self.currentVersion(of:)).first
    }

    /// The version a `currentVersionSQL` row names, its body left empty.
    static func currentVersion(of row: SQLiteStatement) -> StoredVault {
        StoredVault(
            syncID: UTCTimestamp(millisecondsSinceEpoch: row.integer(0)), updatedUtc: row.text(1) ?? "", hint: row.text(2),
            body: Data(), writeKey: row.isNull(3) ? nil : row.blob(3))
    }

    func write(_ request: SaveRequest, syncID: UTCTimestamp, keeping: Int, forgettingThrough horizon: Int64) throws(StoreError) {
        let key = SQLiteStatement.Value.blob(request.key.bytes)
        let sync = SQLiteStatement.Value.integer(syncID.millisecondsSinceEpoch)
        try insertVersion.run([
            key, sync, .text(request.header.updatedUtc), request.header.hint.map { .text($0) } ?? .null,
            request.writeKey.map { .blob($0) } ?? .null, .text(bodyFile), .integer(Int64(request.body.count)),
        ])
        try setLastSyncID.run([key, sync])
        try deleteRows(trimVersions, [key, .integer(Int64(keeping))])
        try recordSave.run([key, .integer(request.now.millisecondsSinceEpoch)])
        try pruneSaves.run([key, .integer(horizon)])
    }

    /// Erases every version of `key`; their body files are among the next `takeRemovedBodyFiles`.
    func deleteAll(_ key: StorageKey) throws(StoreError) {
        try deleteRows(deleteVersions, [.blob(key.bytes)])
    }

    /// The body files of the rows deleted since the last call, and forgets them: the caller removes them once the
    /// deletion committed, or drops them when it was rolled back.
    func takeRemovedBodyFiles() -> [String] {
        defer { removedBodyFiles.removeAll() }
        return removedBodyFiles
    }

    /// Runs a `DELETE … RETURNING body_file` and notes the files (rows from before body files name none).
    private func deleteRows(_ statement: SQLiteStatement, _ parameters: [SQLiteStatement.Value]) throws(StoreError) {
        removedBodyFiles += try statement.query(parameters) { $0.text(0) }.compactMap { $0 }
    }
}
