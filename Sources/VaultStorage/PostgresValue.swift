import Foundation

/// A statement parameter, sent in binary with its type stated, so nothing is parsed from text.
enum PostgresValue {
    /// BYTEA, or NULL.
    case bytes(Data?)
    /// BIGINT.
    case integer(Int64)
    /// TEXT, or NULL.
    case text(String?)

    /// The type OID from `pg_type`.
    var typeOID: UInt32 {
        switch self {
        case .bytes: 17
        case .integer: 20
        case .text: 25
        }
    }

    /// The binary wire form, or nil for NULL.
    var binary: Data? {
        switch self {
        case .bytes(let data): data
        case .integer(let number): withUnsafeBytes(of: number.bigEndian) { Data($0) }
        case .text(let text): text.map { Data($0.utf8) }
        }
    }
}
