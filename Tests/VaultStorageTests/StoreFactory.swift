import Foundation
import Testing
import VaultCore
import VaultTestSupport

@testable import VaultStorage

/// The stores the contract tests run against; each `make` returns a store on fresh or shared storage.
enum StoreFactory: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    /// SQLite behind the in-memory blob cache, as the server runs it (saved blobs, and loaded ones while there is room).
    case cachedSQLite
    /// SQLite behind the blob cache remembering saved blobs only.
    case cachedSQLiteSavesOnly
    case postgres
    /// PostgreSQL with a node's body cache in files (a small budget, so evictions happen).
    case postgresWithBodyCache

    /// SQLite (bare and cached both ways) always; PostgreSQL (bare and with a body cache) when a cluster is provided
    /// or CI requires it.
    static let all: [StoreFactory] =
        [.sqlite, .cachedSQLite, .cachedSQLiteSavesOnly] + (TestPostgres.enabled ? [.postgres, .postgresWithBodyCache] : [])

    var testDescription: String { rawValue }

    /// A new store; SQLite gets its own file, PostgreSQL shares the test database (tests use fresh keys).
    func make(historyVersions: Int = 10) throws -> any VaultStore {
        switch self {
        case .sqlite:
            let path = ScratchDirectory.path("store", suffix: "sqlite")
            return try SQLiteVaultStore(path: path, historyVersions: historyVersions)
        case .cachedSQLite:
            return CachingVaultStore(base: try StoreFactory.sqlite.make(historyVersions: historyVersions), budgetBytes: 4096)
        case .cachedSQLiteSavesOnly:
            return CachingVaultStore(
                base: try StoreFactory.sqlite.make(historyVersions: historyVersions), budgetBytes: 4096,
                remembersLoads: false)
        case .postgres:
            return try PostgresVaultStore(url: try TestPostgres.requireURL(), poolSize: 16, historyVersions: historyVersions)
        case .postgresWithBodyCache:
            let cache = try PostgresBodyCache(
                directory: ScratchDirectory.path("body-cache", suffix: "d"), budgetBytes: 64 * 1024,
                changeTag: PostgresBodyCacheTests.tag(of:))
            return try PostgresVaultStore(
                url: try TestPostgres.requireURL(), poolSize: 16, historyVersions: historyVersions, bodyCache: cache)
        }
    }
}

/// A storage key no other test uses.
func freshKey() -> StorageKey {
    StorageKey(bytes: Data((0..<32).map { _ in UInt8.random(in: 0...255) }))
}
