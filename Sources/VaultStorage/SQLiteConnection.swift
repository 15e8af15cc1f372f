import CSQLite
import Foundation

/// One SQLite connection; every return code goes through `check`.
final class SQLiteConnection: @unchecked Sendable {
    // @unchecked: opened without SQLite's mutex, so one thread at a time uses a connection; pools hand it over under a lock.
    private let handle: OpaquePointer
    /// Keeps the write-ahead-log observer alive while SQLite holds its address.
    private var walObserver: WALObserver?

    /// Opens (creating if needed) a database file.
    init(path: String) throws(StoreError) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(opened)
            throw StoreError(.unavailable, "cannot open SQLite database: \(message)")
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(StoreError) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil))
    }

    /// Prepares a statement for binding and stepping.
    func prepare(_ sql: String) throws(StoreError) -> SQLiteStatement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
        return SQLiteStatement(statement!, connection: self)
    }

    /// Runs `body` in a transaction that takes the write lock at once, committing on return.
    func writeTransaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Calls `observer` after each commit with the number of frames in the write-ahead log.
    ///
    /// This replaces SQLite's automatic checkpoints on this connection: the observer decides when to checkpoint.
    func observeWriteAheadLog(_ observer: @escaping @Sendable (Int) -> Void) {
        let box = WALObserver(observer)
        walObserver = box
        sqlite3_wal_hook(
            handle,
            { context, _, _, frames in
                Unmanaged<WALObserver>.fromOpaque(context!).takeUnretainedValue().observe(Int(frames))
                return SQLITE_OK
            }, Unmanaged.passUnretained(box).toOpaque())
    }

    /// The whole value of a BLOB column in one row, read by SQLite's incremental blob I/O straight into the buffer
    /// the returned `Data` owns.
    ///
    /// `sqlite3_column_blob` assembles a value that spans overflow pages in a buffer of the statement's, which had to
    /// be copied out again; this reads the overflow pages into the final buffer. The row must exist: call it while a
    /// statement on this connection stands on the row (`SQLiteStatement.first`), which holds the snapshot it was
    /// found in.
    func readBlob(table: String, column: String, rowid: Int64) throws(StoreError) -> Data {
        var blob: OpaquePointer?
        try check(sqlite3_blob_open(handle, "main", table, column, rowid, 0, &blob))
        defer { sqlite3_blob_close(blob) }
        let count = Int(sqlite3_blob_bytes(blob))
        guard count > 0 else { return Data() }
        guard let buffer = malloc(count) else { throw StoreError(.unavailable, "out of memory reading a \(count)-byte blob") }
        let code = sqlite3_blob_read(blob, buffer, Int32(count), 0)
        guard code == SQLITE_OK else {
            free(buffer)
            try check(code)
            throw StoreError(.corrupt, "SQLite \(code) reading a blob")
        }
        return Data(bytesNoCopy: buffer, count: count, deallocator: .free)
    }

    /// How a checkpoint treats readers, the writer and the log file (SQLite's checkpoint modes).
    enum CheckpointMode {
        /// Copies what it can without waiting for readers or the writer.
        case passive
        /// Waits for the writer and readers, copies everything, and starts the log over.
        case restart
        /// As `restart`, and also truncates the log file to zero bytes.
        case truncate

        var code: Int32 {
            switch self {
            case .passive: SQLITE_CHECKPOINT_PASSIVE
            case .restart: SQLITE_CHECKPOINT_RESTART
            case .truncate: SQLITE_CHECKPOINT_TRUNCATE
            }
        }
    }

    /// Copies committed log frames into the database file.
    func checkpoint(_ mode: CheckpointMode) throws(StoreError) {
        try check(sqlite3_wal_checkpoint_v2(handle, nil, mode.code, nil, nil))
    }

    /// Turns a SQLite result code into a `StoreError`, passing OK, ROW and DONE through.
    @discardableResult
    func check(_ code: Int32) throws(StoreError) -> Int32 {
        switch code & 0xFF {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE:
            return code
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOMEM:
            throw StoreError(.unavailable, "SQLite \(code): \(String(cString: sqlite3_errmsg(handle)))")
        default:
            throw StoreError(.corrupt, "SQLite \(code): \(String(cString: sqlite3_errmsg(handle)))")
        }
    }
}

/// The closure `sqlite3_wal_hook` reaches through its context pointer.
private final class WALObserver: Sendable {
    let observe: @Sendable (Int) -> Void

    init(_ observe: @escaping @Sendable (Int) -> Void) {
        self.observe = observe
    }
}

/// A prepared statement, finalized when released; reset before each use.
final class SQLiteStatement: @unchecked Sendable {
    // @unchecked: belongs to one connection and is used under the same discipline.
    private let handle: OpaquePointer
    private let connection: SQLiteConnection

    init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// A value to bind to a `?` parameter.
    enum Value {
        case integer(Int64)
        case text(String)
        case blob(Data)
        case null
    }

    /// Binds parameters in order and steps through every row, returning what `row` makes of each.
    func query<T>(_ parameters: [Value], row: (SQLiteStatement) -> T) throws(StoreError) -> [T] {
        // Reset again when done, not only before the next use: a statement left at its last row would keep its read
        // transaction (so an old snapshot) and its last row's buffers until then.
        defer { sqlite3_reset(handle) }
        try connection.check(sqlite3_reset(handle))
        try connection.check(sqlite3_clear_bindings(handle))
        try bind(parameters)
        var rows: [T] = []
        while try connection.check(sqlite3_step(handle)) == SQLITE_ROW {
            rows.append(row(self))
        }
        return rows
    }

    private func bind(_ parameters: [Value]) throws(StoreError) {
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .integer(let number): try connection.check(sqlite3_bind_int64(handle, index, number))
            case .text(let text): try connection.check(sqlite3_bind_text(handle, index, text, -1, sqliteTransient))
            case .blob(let data):
                try connection.check(
                    data.withUnsafeBytes {
                        sqlite3_bind_blob64(
                            handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64($0.count), sqliteTransient)
                    })
            case .null: try connection.check(sqlite3_bind_null(handle, index))
            }
        }
    }

    /// Binds parameters, steps to the first row and returns what `row` makes of it, or nil when there is none.
    ///
    /// `row` runs while the statement still stands on that row, so the connection's read transaction is open: what
    /// it reads besides (`SQLiteConnection.readBlob`) comes from the same snapshot.
    func first<T>(_ parameters: [Value], row: (SQLiteStatement) throws(StoreError) -> T) throws(StoreError) -> T? {
        defer { sqlite3_reset(handle) }
        try connection.check(sqlite3_reset(handle))
        try connection.check(sqlite3_clear_bindings(handle))
        try bind(parameters)
        guard try connection.check(sqlite3_step(handle)) == SQLITE_ROW else { return nil }
        return try row(self)
    }

    /// Binds parameters and runs a statement that returns no rows.
    func run(_ parameters: [Value]) throws(StoreError) {
        _ = try query(parameters) { _ in () }
    }

    /// The integer in column `index` of the current row.
    func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Whether column `index` of the current row is NULL.
    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// The bytes in column `index` (none for NULL).
    func blob(_ index: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: pointer, count: count)
    }

    /// The text in column `index`, or nil for NULL.
    func text(_ index: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, index) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, index))), as: UTF8.self)
    }
}

/// SQLITE_TRANSIENT: SQLite copies the bound bytes before the call returns.
private let sqliteTransient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)
