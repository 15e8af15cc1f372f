import Foundation
import Synchronization
import VaultCore

/// The embedded store: one SQLite file in WAL mode, every commit synced before the answer.
///
/// Writes go through one connection under a lock, so saves never wait on SQLite's busy handler;
/// reads use a pool of connections that WAL lets run beside the writer.
public final class SQLiteVaultStore: VaultStore {
    /// Schema migrations in order; `PRAGMA user_version` records how many have run.
    static let migrations: [String] = [
        """
        CREATE TABLE vault_blobs (
            storage_key BLOB PRIMARY KEY,
            sync_ms INTEGER NOT NULL,
            updated_utc TEXT NOT NULL,
            hint TEXT,
            body BLOB NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE save_events (
            storage_key BLOB NOT NULL,
            at_ms INTEGER NOT NULL
        );
        CREATE INDEX save_events_by_key ON save_events (storage_key, at_ms);
        """
    ]

    private let path: String
    private let writeLock = Mutex(())
    private let writer: WriterConnection
    private let readers = Mutex<[SQLiteConnection]>([])

    /// Opens or creates the database at `path` and brings its schema up to date.
    ///
    /// - Throws: `StoreError` when the file cannot be opened or migrated.
    public init(path: String) throws(StoreError) {
        self.path = path
        let connection = try Self.open(path)
        try Self.migrate(connection)
        writer = try WriterConnection(connection)
    }

    public func load(_ key: StorageKey) throws(StoreError) -> StoredVault? {
        let connection = try takeReader()
        defer { readers.withLock { $0.append(connection) } }
        let statement = try connection.prepare(
            "SELECT sync_ms, updated_utc, hint, body FROM vault_blobs WHERE storage_key = ?")
        return try statement.query([.blob(key.bytes)]) { row in
            StoredVault(syncID: UTCTimestamp(millisecondsSinceEpoch: row.integer(0)), updatedUtc: row.text(1) ?? "",
                        hint: row.text(2), body: row.blob(3))
        }.first
    }

    public func save(_ request: SaveRequest) throws(StoreError) -> SaveOutcome {
        try writeLock.withLock { _ throws(StoreError) -> SaveOutcome in try writer.save(request) }
    }

    private func takeReader() throws(StoreError) -> SQLiteConnection {
        if let pooled = readers.withLock({ $0.popLast() }) { return pooled }
        return try Self.open(path)
    }

    private static func open(_ path: String) throws(StoreError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path)
        // FULL makes each commit reach the disk before the save is acknowledged.
        try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;")
        return connection
    }

    private static func migrate(_ connection: SQLiteConnection) throws(StoreError) {
        let version = try connection.prepare("PRAGMA user_version").query([]) { $0.integer(0) }.first ?? 0
        guard version <= Int64(migrations.count) else {
            throw StoreError(.corrupt, "database schema version \(version) is newer than this server knows")
        }
        for (index, migration) in migrations.enumerated().dropFirst(Int(version)) {
            try connection.writeTransaction { () throws(StoreError) in
                try connection.execute(migration)
                try connection.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }
}

/// The write connection with its prepared statements.
private final class WriterConnection: @unchecked Sendable {
    // @unchecked: used only while holding the store's writer lock.
    let connection: SQLiteConnection
    let recentSaves: SQLiteStatement
    let current: SQLiteStatement
    let upsert: SQLiteStatement
    let recordSave: SQLiteStatement
    let pruneSaves: SQLiteStatement

    init(_ connection: SQLiteConnection) throws(StoreError) {
        self.connection = connection
        recentSaves = try connection.prepare("SELECT at_ms FROM save_events WHERE storage_key = ? AND at_ms > ?")
        current = try connection.prepare("SELECT sync_ms, updated_utc, hint FROM vault_blobs WHERE storage_key = ?")
        upsert = try connection.prepare("""
            INSERT INTO vault_blobs (storage_key, sync_ms, updated_utc, hint, body) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (storage_key) DO UPDATE SET
                sync_ms = excluded.sync_ms, updated_utc = excluded.updated_utc, hint = excluded.hint, body = excluded.body
            """)
        recordSave = try connection.prepare("INSERT INTO save_events (storage_key, at_ms) VALUES (?, ?)")
        pruneSaves = try connection.prepare("DELETE FROM save_events WHERE storage_key = ? AND at_ms <= ?")
    }

    func save(_ request: SaveRequest) throws(StoreError) -> SaveOutcome {
        try connection.writeTransaction { () throws(StoreError) -> SaveOutcome in
            let key = SQLiteStatement.Value.blob(request.key.bytes)
            let horizon = request.rateLimit.horizon(now: request.now)
            let accepted = try recentSaves.query([key, .integer(horizon)]) { $0.integer(0) }
            let decision = request.rateLimit.decide(acceptedSaves: accepted, now: request.now)
            if case .limited = decision { return .rateLimited(decision) }

            let stored = try current.query([key]) { row in
                StoredVault(syncID: UTCTimestamp(millisecondsSinceEpoch: row.integer(0)),
                            updatedUtc: row.text(1) ?? "", hint: row.text(2), body: Data())
            }.first
            guard request.precondition.admits(current: stored?.syncID) else { return .conflict(current: stored) }

            let syncID = SyncID.next(after: stored?.syncID, now: request.now)
            try upsert.run([key, .integer(syncID.millisecondsSinceEpoch), .text(request.header.updatedUtc),
                            request.header.hint.map { .text($0) } ?? .null, .blob(request.body)])
            try recordSave.run([key, .integer(request.now.millisecondsSinceEpoch)])
            try pruneSaves.run([key, .integer(horizon)])
            return .saved(syncID: syncID, decision: decision)
        }
    }
}
