import Foundation
import Testing
import VaultCore
import VaultTestSupport

@testable import VaultStorage

/// What the migrations leave in a PostgreSQL database.
@Suite(.enabled(if: TestPostgres.enabled, TestPostgres.skipMessage))
struct PostgresSchemaTests {
    @Test func bodiesAreStoredOutOfLineWithoutCompression() throws {
        let url = try TestPostgres.requireURL()
        _ = try PostgresVaultStore(url: url, poolSize: 1, historyVersions: 2)
        let connection = try PostgresConnection(url: url)
        let storage = try connection.query(
            PostgresStatement(
                name: "body_storage",
                sql: "SELECT attstorage::TEXT FROM pg_attribute WHERE attrelid = 'vault_versions'::regclass AND attname = 'body'"),
            [])
        // 'e' is EXTERNAL: out of line, never compressed. A bytea column's default is 'x' (EXTENDED, compressed).
        #expect(storage.text(0, 0) == "e")
        let applied = try connection.query(.schemaVersion, []).integer(0, 0)
        #expect(applied == Int64(PostgresVaultStore.migrations.count))
    }

    @Test func aSavedBodyIsStoredUncompressedAndLoadsAsSaved() throws {
        let url = try TestPostgres.requireURL()
        let store = try PostgresVaultStore(url: url, poolSize: 1, historyVersions: 2)
        let key = StorageKey(bytes: Data((0..<32).map { _ in UInt8.random(in: 0...255) }))
        // Highly compressible on purpose: under EXTENDED, pglz would shrink it; under EXTERNAL it stays as sent.
        let body = Data(repeating: UInt8(ascii: "A"), count: 64 * 1024)
        let now = UTCTimestamp(millisecondsSinceEpoch: 1_800_000_000_000)
        let outcome = try store.save(
            SaveRequest(
                key: key, body: body,
                header: VaultBlobHeader(
                    updatedUtc: "2026-12-01T00:00:00Z", updatedAt: UTCTimestamp(millisecondsSinceEpoch: 0), hint: nil,
                    kekIDs: ["k"], cipherByteCount: 1),
                precondition: .none, rateLimit: SlidingWindowRateLimit(limit: 60), now: now))
        guard case .saved(let syncID, _) = outcome else {
            Issue.record("the save was not stored: \(outcome)")
            return
        }
        #expect(try store.load(key)?.body == body)
        let connection = try PostgresConnection(url: url)
        let sizes = try connection.query(
            PostgresStatement(
                name: "stored_size",
                sql:
                    "SELECT pg_column_size(body)::BIGINT, octet_length(body)::BIGINT FROM vault_versions WHERE storage_key = $1 AND sync_ms = $2"
            ),
            [.bytes(key.bytes), .integer(syncID.millisecondsSinceEpoch)])
        #expect(try sizes.integer(0, 0) >= sizes.integer(0, 1))
    }
}
