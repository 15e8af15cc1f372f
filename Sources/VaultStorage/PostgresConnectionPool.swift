import Dispatch
import Synchronization

/// At most `size` connections to one database, opened on demand and dropped when broken.
///
/// Dropping a connection that failed (server restart, network loss) and opening a fresh one on the
/// next request is what lets the server recover on its own once the database is back.
final class PostgresConnectionPool: Sendable {
    private let url: String
    private let idle = Mutex<[PostgresConnection]>([])
    private let permits: DispatchSemaphore
    private let size: Int

    /// Creates an empty pool; nothing connects until the first use.
    init(url: String, size: Int) {
        self.url = url
        self.size = size
        permits = DispatchSemaphore(value: size)
    }

    /// Runs `body` on a connection of its own, returning the connection to the pool only if it is still usable.
    ///
    /// - Throws: `StoreError(.unavailable)` when no connection frees up in time or none can be opened,
    ///   and whatever `body` throws.
    func withConnection<T>(_ body: (PostgresConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        guard permits.wait(timeout: .now() + .seconds(10)) == .success else {
            throw StoreError(.unavailable, "all \(size) database connections stayed busy for 10 s")
        }
        defer { permits.signal() }
        // A pooled connection the server has ended since its last use (a restart) is dropped before any statement is sent
        // on it, and the next one tried, then a fresh one: a 503 only when the database cannot be reached now.
        var reused: PostgresConnection?
        while reused == nil, let pooled = idle.withLock({ $0.popLast() }) {
            if pooled.isAlive { reused = pooled }
        }
        let connection: PostgresConnection
        if let reused { connection = reused } else { connection = try PostgresConnection(url: url) }
        defer {
            if connection.isReusable { idle.withLock { $0.append(connection) } }
        }
        return try body(connection)
    }

    /// Closes every idle connection (each one's `deinit` calls `PQfinish`).
    func closeIdle() {
        idle.withLock { $0.removeAll() }
    }
}
