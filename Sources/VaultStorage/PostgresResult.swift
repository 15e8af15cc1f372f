import CLibPQ
import Foundation

/// A libpq result in binary format, cleared when released.
final class PostgresResult {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    /// How many rows came back.
    var rowCount: Int { Int(PQntuples(handle)) }

    /// Whether a value is NULL.
    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// A BIGINT value (binary format: 8 bytes, big-endian).
    ///
    /// - Throws: `StoreError(.corrupt)` when the column is not eight bytes wide.
    func integer(_ row: Int, _ column: Int) throws(StoreError) -> Int64 {
        let bytes = bytes(row, column)
        guard bytes.count == 8 else { throw StoreError(.corrupt, "PostgreSQL: expected a BIGINT, got \(bytes.count) bytes") }
        return bytes.reduce(0) { $0 << 8 | Int64($1) }
    }

    /// A TEXT value, or nil for NULL.
    func text(_ row: Int, _ column: Int) -> String? {
        isNull(row, column) ? nil : String(decoding: bytes(row, column), as: UTF8.self)
    }

    /// A BYTEA (or any) value's raw bytes.
    func bytes(_ row: Int, _ column: Int) -> Data {
        let count = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard count > 0, let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return Data() }
        return Data(bytes: value, count: count)
    }
}
