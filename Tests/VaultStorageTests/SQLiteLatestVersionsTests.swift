import Foundation
import Testing
import VaultCore

@testable import VaultStorage

/// The rules that keep `SQLiteLatestVersions` from ever naming a version older than one a save returned (issue 31).
@Suite("SQLite index of newest versions")
struct SQLiteLatestVersionsTests {
    let key = StorageKey(bytes: Data(repeating: 3, count: 32))

    func version(_ milliseconds: Int64, file: String? = nil) -> SQLiteLatestVersions.Version {
        .init(
            syncID: UTCTimestamp(millisecondsSinceEpoch: milliseconds), updatedUtc: "2026-08-12T19:00:00Z", hint: nil,
            file: file ?? "file-\(milliseconds)", length: 10, writeKey: nil)
    }

    @Test func aLoadsFindingIsNotAdmittedAfterAWriteSinceItBegan() {
        let index = SQLiteLatestVersions(capacity: 10)
        let writes = index.writes
        // A save whose outcome is not known ran meanwhile: it may have committed a newer version.
        index.forget(key)
        index.admit(version(1000), for: key, readAfter: writes)
        #expect(index.version(of: key) == nil)
        index.admit(version(1000), for: key, readAfter: index.writes)
        #expect(index.version(of: key)?.syncID.millisecondsSinceEpoch == 1000)
    }

    @Test func anOlderSaveFinishingLastLeavesTheNewer() {
        let index = SQLiteLatestVersions(capacity: 10)
        index.saved(version(2000), for: key)
        index.saved(version(1000), for: key)
        #expect(index.version(of: key)?.syncID.millisecondsSinceEpoch == 2000)
    }

    @Test func aFileFoundGoneForgetsOnlyTheVersionThatNamedIt() {
        let index = SQLiteLatestVersions(capacity: 10)
        index.saved(version(2000), for: key)
        index.forget(key, naming: "file-1000")
        #expect(index.version(of: key) != nil)
        index.forget(key, naming: "file-2000")
        #expect(index.version(of: key) == nil)
    }

    @Test func aFullIndexAddsNoUserButStillReplacesAndForgets() {
        let index = SQLiteLatestVersions(capacity: 1)
        let other = StorageKey(bytes: Data(repeating: 4, count: 32))
        index.saved(version(1000), for: key)
        index.saved(version(1000), for: other)
        index.admit(version(1000), for: other, readAfter: index.writes)
        #expect(index.count == 1 && index.version(of: other) == nil)
        index.saved(version(2000), for: key)
        #expect(index.version(of: key)?.syncID.millisecondsSinceEpoch == 2000)
    }
}
