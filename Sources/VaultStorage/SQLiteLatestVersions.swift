import Foundation
import Synchronization
import VaultCore

/// The newest version of each user, as a load read it or a save wrote it, with the name of its body file: a load that
/// finds its user here opens the file without a query (issue 31: the query, its read transaction's locks and the
/// B-tree reads were a tenth of a missed load at 20 000 users).
///
/// Only this process writes the database (`SQLiteVaultStore`), so every change passes through `saved` or `forget`.
/// What a load found is admitted only when no save or erasure ran since the load began, so a slow load cannot record
/// a version older than one a save recorded meanwhile; and a save's version replaces only an older one, so two saves
/// of one user finishing in either order leave the newer. A recorded file may have been removed since (a trim, an
/// erasure): the load then finds it gone and asks the database, as for a row read before a removal.
final class SQLiteLatestVersions: Sendable {
    /// A version as a load answers it (its headers and its body file), with the write key a save replacing it must
    /// prove, so a save that would be refused is told so before its body reaches the disk.
    struct Version: Sendable {
        let syncID: UTCTimestamp
        let updatedUtc: String
        let hint: String?
        let file: String
        let length: Int
        let writeKey: Data?
    }

    private struct State {
        var versions: [StorageKey: Version] = [:]
        /// Saves and erasures so far.
        var writes: UInt64 = 0
    }

    private let state = Mutex(State())
    private let capacity: Int

    /// An index of at most `capacity` users (about 200 bytes each); past it, users not yet in it are not added.
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The version recorded for `key`, if any.
    func version(of key: StorageKey) -> Version? {
        state.withLock { $0.versions[key] }
    }

    /// The count of saves and erasures so far, read by a load before its query and handed back to `admit`.
    var writes: UInt64 {
        state.withLock { $0.writes }
    }

    /// Records the version a load read, unless a save or erasure ran since `writes` was read or the index is full.
    func admit(_ version: Version, for key: StorageKey, readAfter writes: UInt64) {
        state.withLock { state in
            guard state.writes == writes, state.versions[key] == nil, state.versions.count < capacity else { return }
            state.versions[key] = version
        }
    }

    /// Records a committed save's version, unless the one recorded is newer.
    func saved(_ version: Version, for key: StorageKey) {
        state.withLock { state in
            state.writes &+= 1
            if let recorded = state.versions[key] {
                if recorded.syncID < version.syncID { state.versions[key] = version }
            } else if state.versions.count < capacity {
                state.versions[key] = version
            }
        }
    }

    /// Forgets `key`: erased, or a save whose outcome is not known.
    func forget(_ key: StorageKey) {
        state.withLock { state in
            state.writes &+= 1
            state.versions[key] = nil
        }
    }

    /// Forgets `key`'s version if it still names `file`, which a load found gone.
    func forget(_ key: StorageKey, naming file: String) {
        state.withLock { state in
            if state.versions[key]?.file == file { state.versions[key] = nil }
        }
    }

    /// Users recorded (tests).
    var count: Int {
        state.withLock { $0.versions.count }
    }
}
