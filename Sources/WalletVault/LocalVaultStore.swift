import Foundation
import VaultCore
import VaultCrypto
import VaultEnvelope
import VaultJSON

/// One device's vault files in a directory of mode 0700: the device key, the working copy, the
/// last synced copy (the merge base) and the blob it came from, and the sync bookkeeping.
///
/// Plaintext never touches the disk unencrypted: both document copies are sealed with AES-GCM
/// under a device-local at-rest key (a file of mode 0600 here; the platform keychain in an app).
public struct LocalVaultStore: Sendable {
    /// The sync bookkeeping, persisted as JSON.
    public struct SyncRecord: Codable, Sendable, Equatable {
        /// The server version last synced, nil before the first sync.
        public var syncedVersion: String?
        /// Whether the working copy changed since that sync.
        public var hasLocalEdits: Bool
        /// When a rate-limited sync may try again, milliseconds since the epoch.
        public var nextAttemptAt: Int64?
        /// When this device erased the account's vault from the server, milliseconds since the epoch.
        public var erasedAt: Int64?
        /// Wrong pairing confirmation codes typed since this device's pairing key was made (FORMAT.md §11.4).
        public var failedConfirmations: Int?

        /// Creates a record.
        public init(
            syncedVersion: String?, hasLocalEdits: Bool, nextAttemptAt: Int64?, erasedAt: Int64? = nil, failedConfirmations: Int? = nil
        ) {
            self.syncedVersion = syncedVersion
            self.hasLocalEdits = hasLocalEdits
            self.nextAttemptAt = nextAttemptAt
            self.erasedAt = erasedAt
            self.failedConfirmations = failedConfirmations
        }

        enum CodingKeys: String, CodingKey {
            case syncedVersion = "synced_version"
            case hasLocalEdits = "has_local_edits"
            case nextAttemptAt = "next_attempt_at"
            case erasedAt = "erased_at"
            case failedConfirmations = "failed_confirmations"
        }
    }

    /// The directory holding the files.
    public let directory: URL
    /// Where the key sealing the document copies lives.
    private let atRestKeys: any AtRestKeyStore

    /// Opens (creating if needed) a device directory; the at-rest key is a 0600 file in it unless `atRestKeys`
    /// keeps it elsewhere (the Keychain on Apple platforms: `KeychainAtRestKeyStore`).
    ///
    /// On iOS the files get `FileProtectionType.completeUntilFirstUserAuthentication`, not `.complete`: a
    /// background sync runs while the phone is locked, and `.complete` files cannot be read then. Their contents are
    /// sealed under the at-rest key either way, and opening the vault still needs the device key's holder.
    /// - Throws: `SyncError` `.localStorage` when the directory cannot be created.
    public init(directory: URL, atRestKeys: (any AtRestKeyStore)? = nil) throws(SyncError) {
        self.directory = directory
        self.atRestKeys = atRestKeys ?? FileAtRestKeyStore(file: directory.appendingPathComponent("at-rest.key"))
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw SyncError(.localStorage, "cannot create \(directory.path)")
        }
    }

    private func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// The counters and anchors this device has accepted, sealed under the at-rest key in `counters.sealed`.
    ///
    /// A `counters.json` left by an earlier version (plaintext, so anyone who could write it could lower it) is not
    /// read: such a profile confirms its vault once more (`hasLostAntiRollbackState`).
    /// - Throws: `SyncError` `.localStorage` when the file is unreadable or was altered, or the at-rest key is.
    public func counterStore() throws(SyncError) -> FileCounterStore {
        let key = try atRestKey()
        do { return try FileCounterStore(fileURL: url(Self.counterFile), sealingKey: key) } catch {
            throw SyncError(.localStorage, "counter file: \(error.reason)")
        }
    }

    private static let counterFile = "counters.sealed"

    /// Whether this profile has synced a vault but holds no counters and anchors for it: deleted, or left by an
    /// earlier version. Such a device must not take what the server serves as a fresh start (it would accept an
    /// older version); it confirms the vault again with a member device, or recovers.
    public var hasLostAntiRollbackState: Bool {
        let synced = FileManager.default.fileExists(atPath: url("synced.blob").path) || syncRecord().syncedVersion != nil
        return synced && !FileManager.default.fileExists(atPath: url(Self.counterFile).path)
    }

    /// This device's key-encryption key, if one was created.
    ///
    /// - Throws: `SyncError` `.localStorage` when the key file may be read by group or others, or cannot be read;
    ///   `.keyInvalidated` when it exists but no longer holds a usable key.
    public func deviceKey() throws(SyncError) -> DeviceKEK? {
        let file = url("device-key.pem")
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let bytes: Data
        do throws(VaultEnvelopeError) { bytes = try KeyFile.contents(of: file, maxBytes: 4096) } catch {
            // Its mode or its reading failed, not the key: never a dead key, which recovery would replace.
            throw SyncError(.localStorage, error.reason)
        }
        // A file that is there but not text, or not a key, is a dead key, never "no key yet".
        guard let pem = String(data: bytes, encoding: .utf8), let key = try? P256.KeyAgreement.PrivateKey(pemRepresentation: pem)
        else { throw SyncError(.keyInvalidated, "the device key file no longer holds a usable key") }
        return DeviceKEK(privateKey: key)
    }

    /// The `kek_id` of this device's key, readable even after the key itself died.
    public func deviceKeyID() -> String? {
        (try? Data(contentsOf: url("device-kek-id"))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Records the `kek_id` of a device key kept elsewhere (a platform key store), readable after that key died.
    ///
    /// - Throws: `SyncError` `.localStorage` when it cannot be written.
    public func rememberDeviceKeyID(_ kekID: String) throws(SyncError) {
        try write(Data(kekID.utf8), to: "device-kek-id")
    }

    /// The `kek_id`s of this device's dead keys replaced by new ones whose enrolment has not yet dropped their entries.
    func deadDeviceKeyIDs() -> [String] {
        (try? Data(contentsOf: url("dead-kek-ids"))).map { String(decoding: $0, as: UTF8.self).split(separator: "\n").map(String.init) }
            ?? []
    }

    /// Records a dead key's `kek_id` before its replacement is created: the replacement's `kek_id` overwrites
    /// `device-kek-id`, and the save that drops the dead entry may come only at a later attempt.
    ///
    /// - Throws: `SyncError` `.localStorage` when it cannot be written.
    func rememberDeadDeviceKeyID(_ kekID: String) throws(SyncError) {
        let ids = deadDeviceKeyIDs()
        guard !ids.contains(kekID) else { return }
        try write(Data((ids + [kekID]).joined(separator: "\n").utf8), to: "dead-kek-ids")
    }

    /// Forgets the dead keys' `kek_id`s once a saved version holds this device's own entry and none of theirs.
    ///
    /// - Throws: `SyncError` `.localStorage` when the record cannot be removed.
    func forgetDeadDeviceKeyIDs() throws(SyncError) { try remove("dead-kek-ids") }

    /// The biometry state (`evaluatedPolicyDomainState`) recorded when the platform key was created; nil when none was.
    public func deviceKeyBiometryState() -> Data? {
        try? Data(contentsOf: url("device-key-biometry"))
    }

    /// Records the biometry state a platform key was created under (nil: none could be read, so none is compared).
    ///
    /// - Throws: `SyncError` `.localStorage` when it cannot be written.
    public func rememberDeviceKeyBiometryState(_ state: Data?) throws(SyncError) {
        guard let state else {
            try? FileManager.default.removeItem(at: url("device-key-biometry"))
            return
        }
        try write(state, to: "device-key-biometry")
    }

    /// Creates and stores a fresh device key (replacing a dead one).
    ///
    /// - Throws: `SyncError` `.localStorage` when the key cannot be written.
    public func createDeviceKey() throws(SyncError) -> DeviceKEK {
        do {
            let key = try DeviceKEK.generate()
            try write(Data(key.privateKey.pemRepresentation.utf8), to: "device-key.pem")
            try write(Data(key.kekID.utf8), to: "device-kek-id")
            return key
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.localStorage, "cannot create the device key")
        }
    }

    /// The sync bookkeeping, or a fresh record (none stored yet, or one that cannot be read).
    ///
    /// A fresh record names no synced version, so the next sync merges the server's copy into the working copy rather
    /// than restoring over it (`SyncPlanner.plan`): an edit the lost record marked as pending is kept and saved.
    public func syncRecord() -> SyncRecord {
        (try? Data(contentsOf: url("sync.json"))).flatMap { try? JSONDecoder().decode(SyncRecord.self, from: $0) }
            ?? SyncRecord(syncedVersion: nil, hasLocalEdits: false, nextAttemptAt: nil)
    }

    /// Stores the sync bookkeeping.
    ///
    /// - Throws: `SyncError` `.localStorage`.
    public func save(_ record: SyncRecord) throws(SyncError) {
        guard let data = try? JSONEncoder().encode(record) else { throw SyncError(.localStorage, "cannot encode sync record") }
        try write(data, to: "sync.json")
    }

    /// The working copy, nil when this device has no vault yet.
    ///
    /// - Throws: `SyncError` `.localStorage` when the file is unreadable or altered.
    public func workingCopy() throws(SyncError) -> VaultDocument? { try readDocument("working.sealed") }

    /// The last synced copy, the base of three-way merges.
    ///
    /// - Throws: `SyncError` `.localStorage` when the file is unreadable or altered.
    public func syncedCopy() throws(SyncError) -> VaultDocument? { try readDocument("synced.sealed") }

    /// Stores the working copy.
    ///
    /// - Throws: `SyncError` `.localStorage`.
    public func saveWorkingCopy(_ document: VaultDocument) throws(SyncError) { try writeDocument(document, to: "working.sealed") }

    /// Records a version the server holds: `synced` and its `blob` become the merge base, `working` the working copy,
    /// `record` the bookkeeping; a crash or error part-way leaves a profile whose next sync loses no one's edit.
    ///
    /// Each file is replaced atomically but the four are not one write, so the order is what keeps a part-done
    /// commit safe. The merge base must never be newer than the working copy: a base that already holds another
    /// device's items makes the old working copy's lack of them read as deletions, and the next merge drops them.
    /// So the working copy goes first: it is what the server now holds (plus edits already flagged pending), so a
    /// next sync under the old record restores the same content or merges it into itself again. The base
    /// goes before its blob, since the blob alone (the recipients sealed over) is harmless to keep old while the
    /// record still names the old version. The record goes last: until it names the new version the next sync loads
    /// that version again and merges or restores it, which the files already written agree with.
    /// - Throws: `SyncError` `.localStorage` when a file cannot be written (those before it are).
    public func commitSynced(_ synced: VaultDocument, blob: Data, working: VaultDocument, record: SyncRecord) throws(SyncError) {
        try saveWorkingCopy(working)
        try writeDocument(synced, to: "synced.sealed")
        try write(blob, to: "synced.blob")
        try save(record)
    }

    /// The blob last synced (ciphertext, as the server holds it).
    public func syncedBlob() -> Data? { try? Data(contentsOf: url("synced.blob")) }

    /// The blob of a create sent but not known to be stored (as sent), nil when none is pending or its file does not
    /// read back under the at-rest key (altered, it proves nothing; the next create replaces it).
    public func pendingCreate() -> Data? { (try? readSealed(Self.pendingCreateFile)) ?? nil }

    /// Keeps the blob of a create about to be sent, so that a create whose answer is lost can be recognised on the
    /// server by its exact bytes later.
    ///
    /// Sealed under the at-rest key like the working copy: the comparison with it is all that makes a vault on the
    /// server this device's own, so a file planted in the profile must not pass for it.
    /// - Throws: `SyncError` `.localStorage`.
    public func savePendingCreate(_ blob: Data) throws(SyncError) { try writeSealed(blob, to: Self.pendingCreateFile) }

    /// Forgets the pending create: stored and recorded, or known not to be on the server.
    ///
    /// - Throws: `SyncError` `.localStorage` when the file cannot be removed.
    public func clearPendingCreate() throws(SyncError) { try remove(Self.pendingCreateFile) }

    private static let pendingCreateFile = "create.sealed"

    /// Removes the vault's contents from this device (working copy, synced copy, blob, pending create) after an erasure, and
    /// records when; the device key stays, for a vault created or joined later.
    ///
    /// - Throws: `SyncError` `.localStorage` when a file cannot be removed or the record written.
    public func eraseVault(at time: UTCTimestamp) throws(SyncError) {
        for name in ["working.sealed", "synced.sealed", "synced.blob", Self.pendingCreateFile] { try remove(name) }
        try save(SyncRecord(syncedVersion: nil, hasLocalEdits: false, nextAttemptAt: nil, erasedAt: time.millisecondsSinceEpoch))
    }

    private func remove(_ name: String) throws(SyncError) {
        guard FileManager.default.fileExists(atPath: url(name).path) else { return }
        do { try FileManager.default.removeItem(at: url(name)) } catch { throw SyncError(.localStorage, "cannot remove \(name)") }
    }

    private func atRestKey() throws(SyncError) -> SymmetricKey { try atRestKeys.atRestKey() }

    private func readDocument(_ name: String) throws(SyncError) -> VaultDocument? {
        guard let plaintext = try readSealed(name) else { return nil }
        do { return try VaultDocument(json: try JSONParser().parse(plaintext)) } catch {
            throw SyncError(.localStorage, "\(name) cannot be read back")
        }
    }

    private func writeDocument(_ document: VaultDocument, to name: String) throws(SyncError) {
        try writeSealed(JSONSerializer.data(of: document.json), to: name)
    }

    /// The contents of `name`, sealed under the at-rest key with the file name as associated data; nil without the file.
    private func readSealed(_ name: String) throws(SyncError) -> Data? {
        let sealed: Data
        do {
            sealed = try Data(contentsOf: url(name))
        } catch {
            // Only a missing file is no copy. One that is there but cannot be read now (an I/O error, no descriptor
            // left, data protection before the first unlock) was taken for none, and a sync then restored over the
            // pending edits it held; the file is written by renaming over it, which still works.
            guard FileManager.default.fileExists(atPath: url(name).path) else { return nil }
            throw SyncError(.localStorage, "\(name) cannot be read")
        }
        do {
            return try AES.GCM.open(
                try AES.GCM.SealedBox(combined: sealed), using: try atRestKey(), authenticating: Data(name.utf8))
        } catch {
            throw SyncError(.localStorage, "\(name) cannot be read back")
        }
    }

    private func writeSealed(_ plaintext: Data, to name: String) throws(SyncError) {
        do {
            let sealed = try AES.GCM.seal(plaintext, using: try atRestKey(), authenticating: Data(name.utf8))
            guard let combined = sealed.combined else { throw SyncError(.localStorage, "cannot seal \(name)") }
            try write(combined, to: name)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.localStorage, "cannot seal \(name)")
        }
    }

    /// Writes atomically with mode 0600: a crash leaves the old file or the new, never half of one.
    private func write(_ data: Data, to name: String) throws(SyncError) {
        do throws(VaultEnvelopeError) { try OwnerOnlyFile.replace(url(name), with: data) } catch {
            throw SyncError(.localStorage, "cannot write \(name)")
        }
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            try? FileManager.default.setAttributes(
                [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication],
                ofItemAtPath: url(name).path)
        #endif
    }
}

extension LocalVaultStore: DeviceKeyStore {
    /// The software key in `device-key.pem`.
    public func currentDeviceKey() throws(SyncError) -> (any DeviceKey)? { try deviceKey() }
    /// A fresh software key in `device-key.pem`.
    public func newDeviceKey() throws(SyncError) -> any DeviceKey { try createDeviceKey() }
    /// The `kek_id` in `device-kek-id`.
    public func lastDeviceKeyID() -> String? { deviceKeyID() }
}
