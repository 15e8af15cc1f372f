import Dispatch
import Foundation
import Synchronization
import VaultCore

/// The embedded store: one SQLite file in WAL mode, every commit synced before the answer, and beside it a directory
/// with each version's body as a file (`BodyFileDirectory`), which a load hands to the transport to send with
/// `sendfile` (issue 31).
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
        """,
        // Version history. vault_users outlives delete so sync IDs keep increasing after an erasure;
        // versions live in a rowid table because large blobs make poor WITHOUT ROWID rows.
        """
        CREATE TABLE vault_users (
            storage_key BLOB PRIMARY KEY,
            last_sync_ms INTEGER
        ) WITHOUT ROWID;
        CREATE TABLE vault_versions (
            storage_key BLOB NOT NULL,
            sync_ms INTEGER NOT NULL,
            updated_utc TEXT NOT NULL,
            hint TEXT,
            body BLOB NOT NULL
        );
        CREATE UNIQUE INDEX vault_versions_by_key ON vault_versions (storage_key, sync_ms);
        INSERT INTO vault_users (storage_key, last_sync_ms) SELECT storage_key, sync_ms FROM vault_blobs;
        INSERT INTO vault_versions (storage_key, sync_ms, updated_utc, hint, body)
            SELECT storage_key, sync_ms, updated_utc, hint, body FROM vault_blobs;
        DROP TABLE vault_blobs;
        """,
        // The write key each version's writer named: a save or erasure replacing the version must prove it.
        "ALTER TABLE vault_versions ADD COLUMN write_key BLOB;",
        // Bodies in files of their own (BodyFileDirectory): a row names its file and length, and keeps an empty `body`.
        // Rows from before keep their bytes in `body` (body_file NULL) and are read from it.
        """
        ALTER TABLE vault_versions ADD COLUMN body_file TEXT;
        ALTER TABLE vault_versions ADD COLUMN body_bytes INTEGER;
        """,
    ]

    private let path: String
    private let historyVersions: Int
    /// Held for every use of the write connection: a save batch or an erasure.
    private let writeLock = SharedLock()
    private let writer: SQLiteWriter
    private let bodies: BodyFileDirectory
    private let groupCommit: SQLiteGroupCommit<SQLiteSave>
    private let checkpointer: SQLiteCheckpointer
    private let readers = Mutex<[SQLiteReader]>([])
    /// Each user's newest version and its body file, so that most loads run no query.
    let latest: SQLiteLatestVersions

    /// Users whose newest version `latest` holds at most: at about 300 bytes each (with a write key), 30 MiB.
    static let latestVersionsCapacity = 100_000

    /// Opens or creates the database at `path`, brings its schema up to date, and keeps the newest
    /// `historyVersions` (at least 1) versions per user.
    ///
    /// - Throws: `StoreError` when the file cannot be opened or migrated.
    public init(path: String, historyVersions: Int) throws(StoreError) {
        precondition(historyVersions >= 1, "history_versions is checked by the configuration")
        self.path = path
        self.historyVersions = historyVersions
        latest = SQLiteLatestVersions(capacity: Self.latestVersionsCapacity)
        let connection = try Self.open(path)
        try Self.migrate(connection)
        let writer = try SQLiteWriter(connection)
        self.writer = writer
        let bodies = try BodyFileDirectory(path: path + ".bodies")
        self.bodies = bodies
        // Before any request: files no committed row names are saves that never committed or removals a crash cut.
        try bodies.sweep(
            keeping: Set(
                try connection.prepare("SELECT body_file FROM vault_versions WHERE body_file IS NOT NULL").query([]) {
                    $0.text(0) ?? ""
                }))
        let checkpointer = SQLiteCheckpointer(connection: try Self.open(path))
        self.checkpointer = checkpointer
        connection.observeWriteAheadLog { frames in checkpointer.committed(logFrames: frames) }
        groupCommit = SQLiteGroupCommit { [writeLock] saves in
            writeLock.mutex.withLock { _ in
                let results = Self.commit(saves, with: writer, bodies: bodies, historyVersions: historyVersions)
                checkpointer.restartLogIfTooLong(with: writer.connection)
                return results
            }
        }
    }

    public func load(_ key: StorageKey) throws(StoreError) -> StoredVault? {
        if let known = latest.version(of: key) {
            if let file = try bodies.open(known.file, length: known.length) {
                return StoredVault(syncID: known.syncID, updatedUtc: known.updatedUtc, hint: known.hint, content: .file(file))
            }
            latest.forget(key, naming: known.file)
        }
        let writes = latest.writes
        let loaded = try loadVersion(
            """
            SELECT rowid, sync_ms, updated_utc, hint, body_file, body_bytes, write_key FROM vault_versions
            WHERE storage_key = ? ORDER BY sync_ms DESC LIMIT 1
            """, [.blob(key.bytes)])
        if let (vault, found) = loaded, let file = found.file, case .file(let body) = vault.content {
            latest.admit(
                .init(
                    syncID: vault.syncID, updatedUtc: vault.updatedUtc, hint: vault.hint, file: file, length: body.length,
                    writeKey: found.writeKey),
                for: key, readAfter: writes)
        }
        return loaded?.vault
    }

    public func load(_ key: StorageKey, syncID: UTCTimestamp) throws(StoreError) -> StoredVault? {
        try loadVersion(
            """
            SELECT rowid, sync_ms, updated_utc, hint, body_file, body_bytes, write_key FROM vault_versions
            WHERE storage_key = ? AND sync_ms = ?
            """,
            [.blob(key.bytes), .integer(syncID.millisecondsSinceEpoch)])?.vault
    }

    /// How often a load reads the row again when the file it named was removed before it could be opened.
    private static let loadAttempts = 8

    /// Finds a version's row with `sql` (rowid, sync_ms, updated_utc, hint, body_file, body_bytes, write_key) and opens
    /// the body file it names, reading none of its bytes: the answer's headers come from the row. Returns the version
    /// and the row it was found in (whose `file` is nil for a row from before body files).
    ///
    /// A commit between reading the row and opening the file may have deleted the version (a trim, an erasure) and
    /// removed the file: then the row is read again, from a newer snapshot, which no longer names it. A row from
    /// before body files has its bytes in `body`, read with incremental blob I/O from the row's snapshot.
    private func loadVersion(_ sql: String, _ parameters: [SQLiteStatement.Value]) throws(StoreError)
        -> (vault: StoredVault, found: FoundVersion)?
    {
        for _ in 0..<Self.loadAttempts {
            let found = try withReader { reader throws(StoreError) -> FoundVersion? in
                try reader.statement(sql).first(parameters) { row throws(StoreError) in
                    let file = row.text(4)
                    return FoundVersion(
                        syncID: UTCTimestamp(millisecondsSinceEpoch: row.integer(1)), updatedUtc: row.text(2) ?? "",
                        hint: row.text(3), file: file, length: Int(row.integer(5)), writeKey: row.isNull(6) ? nil : row.blob(6),
                        inline: file == nil
                            ? try reader.connection.readBlob(table: "vault_versions", column: "body", rowid: row.integer(0)) : nil)
                }
            }
            guard let found else { return nil }
            let content: StoredVault.Content
            if let inline = found.inline {
                content = .bytes(inline)
            } else if let name = found.file, let file = try bodies.open(name, length: found.length) {
                content = .file(file)
            } else {
                continue
            }
            return (StoredVault(syncID: found.syncID, updatedUtc: found.updatedUtc, hint: found.hint, content: content), found)
        }
        throw StoreError(.unavailable, "a version's body file was removed under every read of its row")
    }

    public func versions(_ key: StorageKey) throws(StoreError) -> [StoredVersion] {
        try read(
            """
            SELECT sync_ms, coalesce(body_bytes, length(body)), updated_utc, hint FROM vault_versions WHERE storage_key = ?
            ORDER BY sync_ms DESC
            """, [.blob(key.bytes)]
        ) { row in
            StoredVersion(
                syncID: UTCTimestamp(millisecondsSinceEpoch: row.integer(0)), bytes: Int(row.integer(1)),
                updatedUtc: row.text(2) ?? "", hint: row.text(3))
        }
    }

    public func save(_ request: SaveRequest) throws(StoreError) -> SaveOutcome {
        // A save over the hourly cap is refused before its body reaches the disk: one that still costs a file write
        // and two syncs would let a client past its cap keep the disk busy. The committed count can only be lower
        // than the one the transaction sees (saves in flight add to it), so this refuses nothing it would accept.
        let decision = try request.rateLimitDecision { key, horizon, limit throws(StoreError) in
            try read(SQLiteWriter.recentSavesSQL, [.blob(key.bytes), .integer(horizon), .integer(Int64(limit))]) { $0.integer(0) }
        }
        if case .limited = decision { return .rateLimited(decision) }
        let checked: SaveRequest
        switch try checkBeforeWriting(request) {
        case .refused(let outcome): return outcome
        case .admitted(let admitted): checked = admitted
        }
        let request = checked
        // Written here, and synced (the file and its directory entry) while the save waits for its batch: the batch
        // commits a row naming it only once that sync succeeded.
        let file = try bodies.write(request.body)
        let save = SQLiteSave(request: request, bodyFile: file.name)
        let outcome: SaveOutcome
        do throws(StoreError) {
            outcome = try groupCommit.save(save) {
                do throws(StoreError) {
                    try bodies.sync(file.descriptor, name: file.name)
                    save.synced.finish(nil)
                } catch {
                    save.synced.finish(error)
                }
            }
        } catch {
            // Whether the batch committed is not known.
            latest.forget(request.key)
            throw error
        }
        if case .saved(let syncID, _) = outcome {
            latest.saved(
                .init(
                    syncID: syncID, updatedUtc: request.header.updatedUtc, hint: request.header.hint, file: file.name,
                    length: request.body.count, writeKey: request.writeKey), for: request.key)
        }
        return outcome
    }

    /// What the check before a save's body is written decided.
    private enum CheckBeforeWriting {
        /// Refused against the committed version: answer this, write nothing.
        case refused(SaveOutcome)
        /// To be written and run in a batch, which checks it again; its proof, if it verified, is not verified again
        /// for the same version.
        case admitted(SaveRequest)
    }

    /// Refuses a save its precondition or writer proof refuses against the committed version before its body reaches
    /// the disk: refused saves do not count toward the hourly cap, so each would otherwise be a file write and two
    /// syncs for free (review of 2026-12-03, F3).
    ///
    /// The index of newest versions answers without a query when it admits the save, as it does for nearly every
    /// accepted one: reading the committed version for each save cost 30–45% of the saves per second
    /// (docs/PERFORMANCE.md, "Save (D2, SQLite)"). A refusal is decided only from the committed row, since the index
    /// may lag a commit by a moment; so is a user it does not hold. Answering from the committed version orders the
    /// save before any still in flight, as if it had come a moment earlier; the batch decides what it accepts.
    ///
    /// - Throws: `StoreError` when the database cannot answer.
    private func checkBeforeWriting(_ request: SaveRequest) throws(StoreError) -> CheckBeforeWriting {
        if let known = latest.version(of: request.key) {
            let indexed = StoredVault(
                syncID: known.syncID, updatedUtc: known.updatedUtc, hint: known.hint, body: Data(), writeKey: known.writeKey)
            if request.refusal(by: indexed) == nil { return .admitted(request.proving(verifiedFor: indexed)) }
        }
        let committed = try read(SQLiteWriter.currentVersionSQL, [.blob(request.key.bytes)], row: SQLiteWriter.currentVersion(of:))
            .first
        if let refusal = request.refusal(by: committed) { return .refused(refusal) }
        return .admitted(committed.map(request.proving(verifiedFor:)) ?? request)
    }

    /// Runs a batch of saves in one transaction, each in a savepoint so one failure undoes only itself.
    ///
    /// Body files: the batch's are durable before it begins (`BodyFileDirectory.write`); after the commit, the files
    /// of the rows it deleted (history trims) and those of its saves that did not happen are removed. When the commit
    /// fails nothing is removed: whether the log holds it is not known, and the sweep at the next start removes what
    /// no row names.
    private static func commit(
        _ saves: [SQLiteSave], with writer: SQLiteWriter, bodies: BodyFileDirectory, historyVersions: Int
    ) -> [Result<SaveOutcome, StoreError>] {
        let connection = writer.connection
        do {
            try connection.execute("BEGIN IMMEDIATE")
        } catch {
            return saves.map { _ in .failure(error) }
        }
        var removable: [String] = []
        _ = writer.takeRemovedBodyFiles()
        let results = saves.map { save -> Result<SaveOutcome, StoreError> in
            writer.bodyFile = save.bodyFile
            do throws(StoreError) {
                // Its file must be durable before a commit names it; the sync ran while the save was queued.
                if let failed = save.synced.wait() {
                    removable.append(save.bodyFile)
                    return .failure(failed)
                }
                try connection.execute("SAVEPOINT save")
                let outcome = try writer.save(save.request, historyVersions: historyVersions)
                try connection.execute("RELEASE save")
                removable += writer.takeRemovedBodyFiles()
                if case .saved = outcome {} else { removable.append(save.bodyFile) }
                return .success(outcome)
            } catch {
                try? connection.execute("ROLLBACK TO save")
                try? connection.execute("RELEASE save")
                _ = writer.takeRemovedBodyFiles()
                removable.append(save.bodyFile)
                return .failure(error)
            }
        }
        do {
            try connection.execute("COMMIT")
            bodies.remove(removable)
            return results
        } catch {
            // Nothing in the batch is durable: no save of it may be acknowledged.
            try? connection.execute("ROLLBACK")
            return saves.map { _ in .failure(error) }
        }
    }

    public func delete(_ key: StorageKey, proof: WriterProof?) throws(StoreError) -> EraseOutcome {
        try writeLock.mutex.withLock { _ throws(StoreError) in
            _ = writer.takeRemovedBodyFiles()
            let outcome: EraseOutcome
            do throws(StoreError) {
                outcome = try writer.connection.writeTransaction { () throws(StoreError) -> EraseOutcome in
                    guard WriterProof.admits(proof, current: try writer.currentVersion(key)) else { return .writerRefused }
                    try writer.deleteAll(key)
                    return .erased
                }
            } catch {
                latest.forget(key)
                throw error
            }
            // Committed: the rows are gone and the index forgets them, so no load opens these files from now on (one
            // that found a file before finds it gone); then the files go, and the directory is synced so the erasure
            // is on disk before it is acknowledged.
            if case .erased = outcome { latest.forget(key) }
            let removed = writer.takeRemovedBodyFiles()
            guard !removed.isEmpty else { return outcome }
            bodies.remove(removed)
            try bodies.syncEntries(of: removed)
            return outcome
        }
    }

    public func close() {
        // Fold the write-ahead log into the database file, so a copy of the file and its body directory is complete.
        checkpointer.drain()
        writeLock.mutex.withLock { _ in try? writer.connection.checkpoint(.truncate) }
        readers.withLock { $0.removeAll() }
    }

    public func checkReachable() throws(StoreError) {
        // Reading the schema touches the file, so a vanished or unreadable database fails here.
        _ = try read("SELECT count(*) FROM sqlite_master", []) { $0.integer(0) }
    }

    /// Runs one query on a pooled reader connection, with the statement that connection prepared for it before.
    private func read<T>(_ sql: String, _ parameters: [SQLiteStatement.Value], row: (SQLiteStatement) -> T) throws(StoreError) -> [T] {
        try withReader { reader throws(StoreError) in try reader.statement(sql).query(parameters, row: row) }
    }

    /// Lends `body` a pooled reader connection (opening one when none is free) and takes it back after.
    private func withReader<T>(_ body: (SQLiteReader) throws(StoreError) -> T) throws(StoreError) -> T {
        let reader: SQLiteReader
        if let pooled = readers.withLock({ $0.popLast() }) { reader = pooled } else { reader = SQLiteReader(try Self.open(path)) }
        defer { readers.withLock { $0.append(reader) } }
        return try body(reader)
    }

    private static func open(_ path: String) throws(StoreError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path)
        // FULL makes each commit reach the disk before the save is acknowledged. 16 KiB pages (for a new file;
        // an existing one keeps its size) put a 64 KiB blob in 5 pages instead of 17: fewer log frames, overflow
        // pages and write calls per save; measured 20% more saves per second than 4 KiB (docs/PERFORMANCE.md).
        // temp_store = MEMORY: the one temporary storage these statements need is the savepoint sub-journal of a save
        // batch (the original of each page a save's savepoint rewrites), which SQLite spills to a new file (`etilqs_…`)
        // past 64 KiB: a descriptor opened late in a run, once freed pages were being reused. In memory it is bounded
        // by what one save rewrites (its blob's pages plus the trimmed versions' freelist pages, a few MiB at most at
        // the 1 MiB blob cap) and freed at its RELEASE; no query here sorts or builds a temporary table (each ORDER BY
        // reads vault_versions_by_key or save_events_by_key in order).
        try connection.execute(
            """
            PRAGMA page_size = 16384; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;
            PRAGMA temp_store = MEMORY;
            """)
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

/// A read connection and the statements it has prepared, by their SQL: a load compiled its query anew every time
/// (SQLite's parser and code generator were 3% of a load's CPU at 20 000 users, docs/PERFORMANCE.md).
private final class SQLiteReader: @unchecked Sendable {
    // @unchecked: popped from the pool by one thread at a time, like the connection it owns.
    let connection: SQLiteConnection
    private var statements: [String: SQLiteStatement] = [:]

    init(_ connection: SQLiteConnection) {
        self.connection = connection
    }

    func statement(_ sql: String) throws(StoreError) -> SQLiteStatement {
        if let prepared = statements[sql] { return prepared }
        let prepared = try connection.prepare(sql)
        statements[sql] = prepared
        return prepared
    }
}

/// A lock that closures can share (a `Mutex` alone cannot be captured: it is not copyable).
private final class SharedLock: Sendable {
    let mutex = Mutex(())
}

/// A version's row as a load read it: its body's bytes (a row from before body files) or its body file's name.
private struct FoundVersion {
    let syncID: UTCTimestamp
    let updatedUtc: String
    let hint: String?
    let file: String?
    let length: Int
    let writeKey: Data?
    let inline: Data?
}

/// A save as the SQLite batch runs it: the request, the body file written for it, and that file's sync.
private struct SQLiteSave: Sendable {
    let request: SaveRequest
    let bodyFile: String
    let synced = SyncSignal()
}

/// The outcome of a body file's sync, which the save's own thread finishes and the batch's leader waits for.
private final class SyncSignal: @unchecked Sendable {
    // @unchecked: `failure` is written once before `done` is signalled and read only after waiting for it.
    private var failure: StoreError?
    private let done = DispatchSemaphore(value: 0)

    /// Records the sync's outcome (nil for success) and wakes the waiter.
    func finish(_ failure: StoreError?) {
        self.failure = failure
        done.signal()
    }

    /// Waits for the sync and returns its failure, nil when it succeeded; a second wait returns at once.
    func wait() -> StoreError? {
        done.wait()
        done.signal()
        return failure
    }
}
