import Foundation
import VaultCore
import VaultWire

/// Where blobs live: per storage key the newest few versions of one opaque blob, and the save
/// history the rate limit reads. SQLite and PostgreSQL implement it.
///
/// Every method is atomic: a save either stores the exact bytes and its history, or changes nothing.
/// Each store keeps the last `history_versions` versions of a user; older ones are erased by the save
/// that pushes them out.
public protocol VaultStore: Sendable {
    /// The current blob for a user, or nil when nothing is stored.
    ///
    /// - Throws: `StoreError` when the database cannot answer.
    func load(_ key: StorageKey) throws(StoreError) -> StoredVault?

    /// The exact bytes of one kept version of a user's blob, or nil when that version is not kept.
    ///
    /// - Throws: `StoreError` when the database cannot answer.
    func load(_ key: StorageKey, syncID: UTCTimestamp) throws(StoreError) -> StoredVault?

    /// The kept versions of a user's blob, newest first, without their bytes.
    ///
    /// - Throws: `StoreError` when the database cannot answer.
    func versions(_ key: StorageKey) throws(StoreError) -> [StoredVersion]

    /// Stores a blob if the rate limit and the precondition allow it, durably before returning.
    ///
    /// - Throws: `StoreError` when the database cannot answer; nothing is then stored.
    func save(_ request: SaveRequest) throws(StoreError) -> SaveOutcome

    /// Erases a user's blob and every kept version (right to erasure) if `proof` admits the current version's
    /// writer (`WriterProof.admits`); erasing nothing is no error.
    ///
    /// The save history stays, so erasing cannot reset the rate limit, and so does the last sync ID
    /// issued, so the user's sync IDs keep increasing after a new save.
    ///
    /// - Throws: `StoreError` when the database cannot answer; nothing is then erased.
    func delete(_ key: StorageKey, proof: WriterProof?) throws(StoreError) -> EraseOutcome

    /// Answers only when the database can serve requests now (`/readyz`).
    ///
    /// - Throws: `StoreError` when it cannot.
    func checkReachable() throws(StoreError)

    /// Closes idle connections and settles files at shutdown, after the server stopped taking requests.
    func close()
}

/// The HMAC of a user's (issuer, azp, subject): the only user identity the store sees.
public struct StorageKey: Sendable, Hashable {
    /// The 32 key bytes.
    public let bytes: Data

    /// Wraps 32 key bytes.
    public init(bytes: Data) {
        self.bytes = bytes
    }

    /// A short tag for logs: hex of the first 6 bytes, which does not reveal who the user is.
    public var tag: String { LowercaseHex.encode(bytes.prefix(6)) }
}

/// A stored blob and its version.
public struct StoredVault: Sendable, Hashable {
    /// Where a stored blob's bytes are: in memory, or in a file a transport can send without reading it.
    public enum Content: Sendable {
        /// The bytes themselves.
        case bytes(Data)
        /// An open file holding them (the SQLite store's body files, issue 31).
        case file(BlobFile)
    }

    /// The version stamp; the ETag is this in quotes.
    public let syncID: UTCTimestamp
    /// The blob's `updatedUtc`, as sent.
    public let updatedUtc: String
    /// The blob's `hint`, if any.
    public let hint: String?
    /// The exact bytes that were saved, in memory or in a file.
    public let content: Content
    /// The write key its writer named (`WalletVault-Write-Key`), which a save or erasure replacing it must prove; nil
    /// for none. Filled by the save steps' read of the current version; loads leave it nil.
    public let writeKey: Data?

    /// Creates a stored blob whose bytes are in memory.
    public init(syncID: UTCTimestamp, updatedUtc: String, hint: String?, body: Data, writeKey: Data? = nil) {
        self.init(syncID: syncID, updatedUtc: updatedUtc, hint: hint, content: .bytes(body), writeKey: writeKey)
    }

    /// Creates a stored blob whose bytes are in `content`.
    public init(syncID: UTCTimestamp, updatedUtc: String, hint: String?, content: Content, writeKey: Data? = nil) {
        self.syncID = syncID
        self.updatedUtc = updatedUtc
        self.hint = hint
        self.content = content
        self.writeKey = writeKey
    }

    /// The blob's length in bytes, known without reading a file.
    public var byteCount: Int {
        switch content {
        case .bytes(let bytes): bytes.count
        case .file(let file): file.length
        }
    }

    /// The exact bytes that were saved, read from the file when they are in one (empty if that read fails): for
    /// callers that need the bytes themselves, not for answering a load.
    public var body: Data {
        switch content {
        case .bytes(let bytes): bytes
        case .file(let file): (try? file.read()) ?? Data()
        }
    }

    /// Whether the two are the same version with the same bytes (a file is read to compare).
    public static func == (left: StoredVault, right: StoredVault) -> Bool {
        left.syncID == right.syncID && left.updatedUtc == right.updatedUtc && left.hint == right.hint
            && left.writeKey == right.writeKey && left.byteCount == right.byteCount && left.body == right.body
    }

    /// Hashes the version's fields and length, never the bytes, so a file is not read for it.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(syncID)
        hasher.combine(updatedUtc)
        hasher.combine(hint)
        hasher.combine(writeKey)
        hasher.combine(byteCount)
    }
}

/// One kept version of a user's blob, as listed without its bytes.
public struct StoredVersion: Sendable, Hashable {
    /// The version stamp.
    public let syncID: UTCTimestamp
    /// The length of the stored blob in bytes.
    public let bytes: Int
    /// The blob's `updatedUtc`, as sent.
    public let updatedUtc: String
    /// The blob's `hint`, if any.
    public let hint: String?

    /// Creates a version listing entry.
    public init(syncID: UTCTimestamp, bytes: Int, updatedUtc: String, hint: String?) {
        self.syncID = syncID
        self.bytes = bytes
        self.updatedUtc = updatedUtc
        self.hint = hint
    }
}

/// One save as the store executes it.
public struct SaveRequest: Sendable {
    /// Whose blob.
    public let key: StorageKey
    /// The exact bytes to store.
    public let body: Data
    /// The shape-checked header of `body`.
    public let header: VaultBlobHeader
    /// What must hold for the save to happen.
    public let precondition: SavePrecondition
    /// The rate limit to apply, counting only accepted saves.
    public let rateLimit: SlidingWindowRateLimit
    /// The server's clock at the request.
    public let now: UTCTimestamp
    /// The write key the new version names (its `WalletVault-Write-Key`), nil for none.
    public let writeKey: Data?
    /// The request's writer proof, nil when it carries none.
    public let proof: WriterProof?

    /// Creates a save request.
    public init(
        key: StorageKey, body: Data, header: VaultBlobHeader, precondition: SavePrecondition,
        rateLimit: SlidingWindowRateLimit, now: UTCTimestamp, writeKey: Data? = nil, proof: WriterProof? = nil
    ) {
        self.key = key
        self.body = body
        self.header = header
        self.precondition = precondition
        self.rateLimit = rateLimit
        self.now = now
        self.writeKey = writeKey
        self.proof = proof
    }

    /// The same save, its proof known to verify for `stored` (when that names no write key, the save as it is).
    func proving(verifiedFor stored: StoredVault) -> SaveRequest {
        guard let storedWriteKey = stored.writeKey, let proof = proof?.verified(writeKey: storedWriteKey, storedSyncID: stored.syncID)
        else { return self }
        return SaveRequest(
            key: key, body: body, header: header, precondition: precondition, rateLimit: rateLimit, now: now,
            writeKey: writeKey, proof: proof)
    }
}

/// What became of a save.
public enum SaveOutcome: Sendable, Hashable {
    /// Stored under this sync ID; `decision` carries the remaining quota.
    case saved(syncID: UTCTimestamp, decision: SlidingWindowRateLimit.Decision)
    /// The precondition failed; nothing changed. `current` is the stored version, if any.
    case conflict(current: StoredVault?)
    /// The rate limit refused it; nothing changed and it does not count.
    case rateLimited(SlidingWindowRateLimit.Decision)
    /// The stored version names a write key and the request proved none by it; nothing changed and it does not count.
    case writerRefused
}

/// What became of an erasure.
public enum EraseOutcome: Sendable, Hashable {
    /// Every version is gone (or none was stored).
    case erased
    /// The stored version names a write key and the request proved none by it; nothing changed.
    case writerRefused
}
