import CLibPQ
import Foundation

/// One libpq connection; every result goes through `check`.
final class PostgresConnection: @unchecked Sendable {
    // @unchecked: libpq connections are not thread-safe, so one thread at a time uses one; the pool hands it over under a lock.
    private let handle: OpaquePointer
    /// Names of the statements already prepared on this connection.
    private var prepared: Set<String> = []

    /// Connects to the database named by a `postgresql://` URL.
    ///
    /// - Throws: `StoreError(.unavailable)` when the server cannot be reached or refuses the connection.
    init(url: String) throws(StoreError) {
        // Keywords before `dbname` are defaults the URL may override; a down server must fail fast, not hang.
        let keywords: [UnsafeMutablePointer<CChar>?] = [strdup("connect_timeout"), strdup("dbname"), nil]
        let values: [UnsafeMutablePointer<CChar>?] = [strdup("5"), strdup(url), nil]
        defer { for pointer in keywords + values { free(pointer) } }
        let connection = PQconnectdbParams(keywords.map { UnsafePointer($0) }, values.map { UnsafePointer($0) }, 1)
        guard let connection else { throw StoreError(.unavailable, "PostgreSQL: out of memory while connecting") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw StoreError(.unavailable, "PostgreSQL: cannot connect: \(message)")
        }
        handle = connection
        // NOTICEs (such as "already exists, skipping") would otherwise go to stderr unformatted.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether the connection can go back to the pool: still open and outside any transaction.
    var isReusable: Bool {
        PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Whether an idle pooled connection can still take a statement, judged without a round trip before one is sent.
    ///
    /// libpq learns that the server ended a connection (a restart's 57P01, then the socket's end) only when it next
    /// reads, which was the first statement of the next save: a node left idle while PostgreSQL restarted answered
    /// that save 503 (issue 29, finding 10). An idle connection has nothing to read, so a socket that is readable at all
    /// holds the server's goodbye or its end, and the connection is not used. (A rare unprompted ParameterStatus would
    /// cost one connection opened anew, never a statement.)
    var isAlive: Bool {
        guard isReusable else { return false }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        guard descriptor.fd >= 0 else { return false }
        return poll(&descriptor, 1, 0) == 0
    }

    /// The socket, for polling a listening connection; -1 when closed.
    var socket: Int32 { PQsocket(handle) }

    /// Reads what the server sent and returns the payloads of the notifications received on any channel, oldest first.
    ///
    /// - Throws: `StoreError(.unavailable)` when the connection is lost.
    func receivedNotifications() throws(StoreError) -> [String] {
        guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
            throw unavailable("the connection ended")
        }
        return takeNotifications()
    }

    /// Runs `sql` (one statement, no parameters) on a listening connection without blocking past `timeoutSeconds`, or
    /// past `interruption` becoming readable; returns the payloads of the notifications read meanwhile, oldest first.
    ///
    /// A blocking `PQexec` on a connection whose server stopped answering (a half-open socket after a NAT timeout or
    /// a failover without a reset, a stalled server) waits for TCP to give up, some two hours, and holds a node's
    /// shutdown as long.
    /// - Throws: `StoreError(.unavailable)` when the connection fails, the server refuses the statement, no answer
    ///   came in time, or `interruption` became readable.
    func runListening(_ sql: String, timeoutSeconds: Double, interruption: Int32) throws(StoreError) -> [String] {
        // Non-blocking, so that sending cannot block either; this connection runs nothing through `PQexec`.
        guard PQsetnonblocking(handle, 1) == 0, PQsendQuery(handle, sql) == 1 else { throw unavailable("cannot send") }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeoutSeconds * 1_000_000_000)
        var payloads: [String] = []
        var flushed = false
        while true {
            if !flushed {
                let flush = PQflush(handle)
                guard flush >= 0 else { throw unavailable("cannot send") }
                flushed = flush == 0
            }
            if flushed {
                guard PQconsumeInput(handle) == 1 else { throw unavailable("the connection ended") }
                payloads += takeNotifications()
                if PQisBusy(handle) == 0 {
                    var failure: StoreError?
                    while let result = PQgetResult(handle) {
                        do throws(StoreError) { _ = try check(result) } catch { failure = failure ?? error }
                    }
                    payloads += takeNotifications()
                    if let failure { throw failure }
                    return payloads
                }
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { throw unavailable("no answer within \(timeoutSeconds) s") }
            var descriptors = [
                pollfd(fd: socket, events: Int16(flushed ? POLLIN : POLLIN | POLLOUT), revents: 0),
                pollfd(fd: interruption, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, Int32(min(Double(deadline - now) / 1_000_000, 60_000)) + 1)
            if ready < 0 && errno != EINTR { throw unavailable("cannot wait for the answer") }
            if descriptors[1].revents != 0 { throw StoreError(.unavailable, "PostgreSQL: interrupted") }
        }
    }

    private func unavailable(_ what: String) -> StoreError {
        StoreError(.unavailable, "PostgreSQL: the listening connection: \(what): \(Self.trimmed(PQerrorMessage(handle)))")
    }

    private func takeNotifications() -> [String] {
        var payloads: [String] = []
        while let notification = PQnotifies(handle) {
            payloads.append(String(cString: notification.pointee.extra))
            PQfreemem(notification)
        }
        return payloads
    }

    /// Runs SQL without parameters or rows to read (transaction control, migrations); may hold several statements.
    func execute(_ sql: String) throws(StoreError) {
        _ = try check(PQexec(handle, sql))
    }

    /// Runs a statement with binary parameters and binary results, preparing it on first use.
    func query(_ statement: PostgresStatement, _ parameters: [PostgresValue]) throws(StoreError) -> PostgresResult {
        try prepare(statement, parameters)
        return try withParameters(parameters) { values, lengths, formats throws(StoreError) in
            try check(PQexecPrepared(handle, statement.name, Int32(parameters.count), values, lengths, formats, 1))
        }
    }

    /// One statement of a pipeline: a prepared statement and its parameters, or transaction control without any.
    enum PipelineStep {
        case statement(PostgresStatement, [PostgresValue])
        case control(String)
    }

    /// Sends `steps` in one round trip (libpq pipeline mode) and returns their results in order.
    ///
    /// The server runs them one after another as if sent singly; each statement of a READ COMMITTED transaction
    /// still takes its own snapshot, so a read after a row lock in the same pipeline sees what the lock's previous
    /// holder committed. When one fails, the server skips the rest up to the pipeline's end; the first failure is
    /// thrown and an open transaction is left for the caller to roll back.
    /// - Throws: `StoreError` as `check` does, for the first step that failed.
    func pipeline(_ steps: [PipelineStep]) throws(StoreError) -> [PostgresResult] {
        for case .statement(let statement, let parameters) in steps { try prepare(statement, parameters) }
        guard PQenterPipelineMode(handle) == 1 else {
            throw StoreError(.unavailable, "PostgreSQL: cannot enter pipeline mode: \(Self.trimmed(PQerrorMessage(handle)))")
        }
        defer { PQexitPipelineMode(handle) }
        for step in steps {
            let sent: Int32
            switch step {
            case .statement(let statement, let parameters):
                sent = withParameters(parameters) { values, lengths, formats in
                    PQsendQueryPrepared(handle, statement.name, Int32(parameters.count), values, lengths, formats, 1)
                }
            case .control(let sql):
                sent = PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 1)
            }
            guard sent == 1 else { throw StoreError(.unavailable, "PostgreSQL: \(Self.trimmed(PQerrorMessage(handle)))") }
        }
        guard PQpipelineSync(handle) == 1 else { throw StoreError(.unavailable, "PostgreSQL: \(Self.trimmed(PQerrorMessage(handle)))") }
        // Every result is read, up to the sync, even after a failure: the connection must leave pipeline mode clean.
        var results: [PostgresResult] = []
        var failure: StoreError?
        for _ in steps {
            guard let result = PQgetResult(handle) else {
                failure = failure ?? StoreError(.unavailable, "PostgreSQL: \(Self.trimmed(PQerrorMessage(handle)))")
                break
            }
            if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                PQclear(result)
            } else {
                do { results.append(try check(result)) } catch { failure = failure ?? error }
            }
            // Each query's results end with a NULL.
            while let extra = PQgetResult(handle) { PQclear(extra) }
        }
        if let sync = PQgetResult(handle) {
            if PQresultStatus(sync) != PGRES_PIPELINE_SYNC {
                failure = failure ?? StoreError(.unavailable, "PostgreSQL: pipeline out of step")
            }
            PQclear(sync)
        }
        if let failure { throw failure }
        guard results.count == steps.count else { throw StoreError(.unavailable, "PostgreSQL: a pipeline result is missing") }
        return results
    }

    /// Prepares `statement` on this connection the first time it is used.
    private func prepare(_ statement: PostgresStatement, _ parameters: [PostgresValue]) throws(StoreError) {
        guard !prepared.contains(statement.name) else { return }
        var types = parameters.map(\.typeOID)
        _ = try check(PQprepare(handle, statement.name, statement.sql, Int32(types.count), &types))
        prepared.insert(statement.name)
    }

    /// Calls `body` with libpq's binary parameter arrays for `parameters`.
    private func withParameters<T, E: Error>(
        _ parameters: [PostgresValue],
        _ body: ([UnsafePointer<CChar>?], [Int32], [Int32]) throws(E) -> T
    ) throws(E) -> T {
        // libpq copies the parameters into its send buffer before returning, so these only live for the call.
        let buffers = parameters.map { $0.binary }
        let pointers = buffers.map { value -> UnsafeMutableRawBufferPointer? in
            guard let value else { return nil }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, value.count), alignment: 1)
            _ = value.copyBytes(to: buffer.bindMemory(to: UInt8.self))
            return buffer
        }
        defer { for pointer in pointers { pointer?.deallocate() } }
        let values = pointers.map { $0.map { UnsafePointer($0.baseAddress!.assumingMemoryBound(to: CChar.self)) } }
        let lengths = buffers.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        return try body(values, lengths, formats)
    }

    /// Rolls back an open (or failed) transaction, if the connection is still up and in one.
    func rollBackIfInTransaction() {
        guard PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) != PQTRANS_IDLE else { return }
        try? execute("ROLLBACK")
    }

    /// Runs `body` in a READ COMMITTED transaction, committing on return and rolling back on a throw.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        // READ COMMITTED gives each statement a fresh snapshot, so reads after a row lock see what the lock holder committed.
        try execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if PQstatus(handle) == CONNECTION_OK { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Takes ownership of a libpq result and turns a failed one into a `StoreError`.
    ///
    /// Connection loss, shutdown, overload and serialization failures are `.unavailable` (retry later);
    /// anything else means this server and the database disagree, so `.corrupt`.
    func check(_ result: OpaquePointer?) throws(StoreError) -> PostgresResult {
        guard let result else {
            throw StoreError(.unavailable, "PostgreSQL: \(Self.trimmed(PQerrorMessage(handle)))")
        }
        let owned = PostgresResult(result)
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            return owned
        default:
            let state = PQresultErrorField(result, Self.sqlStateField).map { String(cString: $0) }
            // The primary message only: DETAIL lines can quote row values.
            let message =
                PQresultErrorField(result, Self.primaryMessageField).map { String(cString: $0) }
                ?? Self.trimmed(PQerrorMessage(handle))
            let code: StoreError.Code =
                PQstatus(handle) != CONNECTION_OK || state.map(Self.isTransient) ?? true ? .unavailable : .corrupt
            throw StoreError(code, "PostgreSQL \(state ?? "-----"): \(message)")
        }
    }

    /// SQLSTATEs that mean "try again later": connection exceptions, shutdown or startup, cancelled or
    /// timed-out statements, resource exhaustion, system errors, serialization failures and deadlocks
    /// (which distributed engines raise under contention), and a read-only server during failover.
    private static func isTransient(_ state: String) -> Bool {
        ["08", "53", "58"].contains(String(state.prefix(2)))
            || ["57P01", "57P02", "57P03", "57014", "40001", "40P01", "40003", "25006"].contains(state)
    }

    // PG_DIAG_SQLSTATE and PG_DIAG_MESSAGE_PRIMARY are character-literal macros, which Swift does not import.
    private static let sqlStateField = Int32(UInt8(ascii: "C"))
    private static let primaryMessageField = Int32(UInt8(ascii: "M"))

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "no message"
    }
}
