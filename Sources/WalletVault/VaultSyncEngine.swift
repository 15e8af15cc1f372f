import Foundation
import VaultCore
import VaultCrypto
import VaultEnvelope
import VaultJSON

/// The seed's client flow made safe: creates the vault, keeps this device and the server in step
/// without ever overwriting newer content silently, enrolls and revokes devices, and recovers.
///
/// Every save names the version it was based on (`If-Match`), so a racing device produces a 409
/// that sends the round back to loading and merging rather than overwriting.
public actor VaultSyncEngine {
    /// Decides a conflict the merge cannot: keep this device's, keep the cloud's, or merge.
    public typealias ConflictHandler = @Sendable (ConflictContext) async -> ConflictResolution

    /// The counter-store key of the one vault a profile holds.
    static let vaultID = "vault"
    /// Rounds one `sync` may take when racing devices keep answering 409.
    static let maxRounds = 5

    private let store: LocalVaultStore
    private let backup: BackupClient
    private let counters: FileCounterStore
    private let sealer: VaultSealer
    private let opener: VaultOpener
    private let planner: SyncPlanner
    private let conflictHandler: ConflictHandler?
    private let clock: any WalletClock
    private let deviceLabel: String

    /// Creates an engine for the profile in `store`.
    ///
    /// - Throws: `SyncError` `.localStorage` when the profile's counter file is unreadable.
    public init(store: LocalVaultStore, backup: BackupClient, deviceLabel: String, maxBlobBytes: Int = 1_048_576,
                policy: SyncPlanner.Policy = .threeWayMerge, conflictHandler: ConflictHandler? = nil,
                clock: any WalletClock = SystemWalletClock()) throws(SyncError) {
        self.store = store
        self.backup = backup
        counters = try store.counterStore()
        sealer = VaultSealer(counterStore: counters, hint: deviceLabel, maxBlobBytes: maxBlobBytes, clock: { clock.now() })
        opener = VaultOpener(counterStore: counters)
        planner = SyncPlanner(policy: policy)
        self.conflictHandler = conflictHandler
        self.clock = clock
        self.deviceLabel = deviceLabel
    }

    // MARK: - The local document

    /// The working copy, nil before this device has a vault.
    ///
    /// - Throws: `SyncError` `.localStorage`.
    public func document() throws(SyncError) -> VaultDocument? {
        try store.workingCopy()
    }

    /// Edits the working copy; the next `sync` saves the change.
    ///
    /// - Throws: `SyncError` `.noVault` before a vault exists here, `.localStorage` when it cannot be stored.
    public func edit(_ change: (inout VaultDocument, UTCTimestamp) -> Void) throws(SyncError) {
        guard var document = try store.workingCopy() else { throw SyncError(.noVault, "create or restore a vault first") }
        change(&document, clock.now())
        try store.saveWorkingCopy(document)
        var record = store.syncRecord()
        record.hasLocalEdits = true
        try store.save(record)
    }

    /// The sync bookkeeping (last synced version, pending edits, next allowed attempt).
    public func status() -> LocalVaultStore.SyncRecord {
        store.syncRecord()
    }

    // MARK: - Creating

    /// Creates the vault on the server, wrapped for this device's key and the recovery paths given.
    ///
    /// - Throws: `SyncError` `.server` with `.conflict` when a vault already exists (pair or recover instead).
    public func createVault(recoveryPaths: [(key: any KeyWrapping, label: String)] = []) async throws(SyncError) -> SyncReport {
        let device = try store.deviceKeyCreatingIfNeeded()
        let document = try store.workingCopy() ?? VaultDocument()
        let recipients = [VaultSealer.Recipient(device, label: deviceLabel)] + recoveryPaths.map { VaultSealer.Recipient($0.key, label: $0.label) }
        let sealed = try await envelopeCall { try await sealer.create(encode(document), vaultID: Self.vaultID, recipients: recipients) }
        let version = try await upload(sealed, document: document, precondition: .ifNoneStored)
        return .created(version: version)
    }

    // MARK: - Syncing

    /// One sync: load, decide, and restore, save or merge, retrying when another device raced this one.
    ///
    /// - Throws: `SyncError`: `.noAccess` (pair or recover), `.keyInvalidated`, `.rollbackDetected`,
    ///   `.tampered`, `.unresolvedConflict`, `.tooLarge`, `.server`.
    public func sync() async throws(SyncError) -> SyncReport {
        do throws(SyncError) {
            for _ in 0..<Self.maxRounds {
                if let report = try await syncRound() { return report }
            }
            throw SyncError(.server, "other devices kept saving; try again", backupError: .conflict(currentSyncID: nil, currentUpdatedUtc: nil))
        } catch {
            guard case .rateLimited(let seconds)? = error.backupError else { throw error }
            // The local copy stays authoritative; remember when the server allows the next save.
            let next = UTCTimestamp(millisecondsSinceEpoch: clock.now().millisecondsSinceEpoch + Int64(seconds) * 1000)
            var record = store.syncRecord()
            record.nextAttemptAt = next.millisecondsSinceEpoch
            try store.save(record)
            return .rateLimited(nextAttempt: next)
        }
    }

    /// One round; nil when a racing save (409) asks for another.
    private func syncRound() async throws(SyncError) -> SyncReport? {
        let record = store.syncRecord()
        if let next = record.nextAttemptAt, clock.now().millisecondsSinceEpoch < next, record.hasLocalEdits {
            return .rateLimited(nextAttempt: UTCTimestamp(millisecondsSinceEpoch: next))
        }
        let working = try store.workingCopy()
        let (remote, snapshot) = try await loadRemote(after: record.syncedVersion)
        let local = SyncPlanner.LocalState(syncedVersion: record.syncedVersion, hasLocalEdits: record.hasLocalEdits,
                                           hasVault: working != nil)
        do throws(SyncError) {
            switch planner.plan(local: local, remote: remote) {
            case .upToDate:
                return .upToDate(version: record.syncedVersion ?? "")
            case .createRemote:
                throw SyncError(.noVault, "no vault on the server; create one")
            case .push(let basedOn):
                guard let working else { return nil }
                let state = try await openSynced()
                let sealed = try await envelopeCall { try await sealer.seal(encode(working), over: state) }
                return .pushed(version: try await upload(sealed, document: working, precondition: .ifMatch(syncID: basedOn)))
            case .restore(let version):
                guard let snapshot else { return nil }
                return try await restore(snapshot, version: version)
            case .merge(let version):
                guard let snapshot, let working else { return nil }
                return try await merge(snapshot, version: version, working: working)
            }
        } catch {
            // Another device saved first: load again and decide anew.
            guard error.backupError.map(Self.isConflict) == true else { throw error }
            return nil
        }
    }

    private static func isConflict(_ error: BackupError) -> Bool {
        if case .conflict = error { return true }
        return false
    }

    private func loadRemote(after syncedVersion: String?) async throws(SyncError) -> (SyncPlanner.RemoteState, BackupClient.Snapshot?) {
        do {
            switch try await backup.load(ifNoneMatch: syncedVersion) {
            case .notModified: return (.unchanged, nil)
            case .blob(let snapshot):
                return snapshot.syncID == syncedVersion ? (.unchanged, snapshot) : (.changed(version: snapshot.syncID), snapshot)
            }
        } catch .notFound {
            return (.empty, nil)
        } catch {
            throw SyncError(.server, "loading the vault failed", backupError: error)
        }
    }

    private func restore(_ snapshot: BackupClient.Snapshot, version: String, extraKeys: [any KeyEncryptionKey] = []) async throws(SyncError) -> SyncReport {
        let opened = try await open(snapshot.blob, extraKeys: extraKeys)
        let document = try decode(opened.plaintext)
        try store.saveSynced(document, blob: snapshot.blob)
        try store.saveWorkingCopy(document)
        try store.save(LocalVaultStore.SyncRecord(syncedVersion: version, hasLocalEdits: false, nextAttemptAt: nil))
        // Seed §5: the first restore on a device enrolls that device's own key, then saves.
        let device = try store.deviceKeyCreatingIfNeeded()
        guard !opened.state.entries.contains(where: { $0.kekID == device.kekID }) else { return .restored(version: version) }
        let enrolled = try await envelopeCall { try await sealer.enroll(device, label: deviceLabel, in: opened.state) }
        let sealed = try await envelopeCall { try await sealer.seal(encode(document), over: enrolled) }
        return .restored(version: try await upload(sealed, document: document, precondition: .ifMatch(syncID: version)))
    }

    private func merge(_ snapshot: BackupClient.Snapshot, version: String, working: VaultDocument) async throws(SyncError) -> SyncReport {
        let opened = try await open(snapshot.blob)
        let cloud = try decode(opened.plaintext)
        let base = try store.syncedCopy() ?? VaultDocument()
        let localUpdated = working.items.values.map(\.modifiedAt).max() ?? UTCTimestamp(millisecondsSinceEpoch: 0)
        let result = ThreeWayMerge.merge(base: base, local: working, remote: cloud)
        let chosen: VaultDocument
        switch planner.resolve(merge: result, localUpdated: localUpdated, remoteUpdated: opened.state.envelope.updatedAt) {
        case .pushMerged:
            chosen = result.merged
        case .takeRemote:
            return try await restore(snapshot, version: version)
        case .takeLocal:
            chosen = working
        case .ask(let items):
            guard let conflictHandler else {
                throw SyncError(.unresolvedConflict, "\(items.count) item(s) changed on both sides: \(items.joined(separator: ", "))")
            }
            let context = ConflictContext(conflictingItems: items, localUpdated: localUpdated, cloudUpdated: opened.state.envelope.updatedAt)
            switch await conflictHandler(context) {
            case .keepLocal: chosen = working
            case .keepCloud: return try await restore(snapshot, version: version)
            case .merge: chosen = result.merged
            }
        }
        // The base stays the last version this device's working copy descends from until the merged
        // save is accepted: after a 409, the next round must merge against the same ancestor, or items
        // the working copy has not seen yet would look deleted here.
        let sealed = try await envelopeCall { try await sealer.seal(encode(chosen), over: opened.state) }
        return .merged(version: try await upload(sealed, document: chosen, precondition: .ifMatch(syncID: version)),
                       conflicts: result.conflicts)
    }

    // MARK: - Devices and recovery

    /// The new-device half of pairing: the request to show, for a device that already holds the vault to approve.
    ///
    /// - Throws: `SyncError` `.localStorage` when the device key cannot be created.
    public func pairingRequest() throws(SyncError) -> PairingRequest {
        PairingRequest(device: try store.deviceKeyCreatingIfNeeded(), label: deviceLabel)
    }

    /// The approving half: wraps the DEK for the requesting device and saves, right after a fresh load.
    ///
    /// - Throws: `SyncError` as `sync` does.
    public func approve(_ request: PairingRequest) async throws(SyncError) -> SyncReport {
        try await changeRecipients { (state) async throws(SyncError) -> VaultState in
            try await envelopeCall { try await sealer.enroll(request.recipient, label: request.label, in: state) }
        }
    }

    /// Opens the server's vault with a recovery key (recovery code, passphrase) on a device whose key
    /// is missing or was invalidated, enrolls a fresh device key, drops this device's dead entry, and saves.
    ///
    /// - Throws: `SyncError` `.noAccess` when the key does not open the vault, and the others `sync` throws.
    public func recover(with recoveryKey: any KeyEncryptionKey) async throws(SyncError) -> SyncReport {
        let deadKeyID = store.deviceKeyID()
        let device = try store.createDeviceKey()
        let (remote, snapshot) = try await loadRemote(after: nil)
        guard case .changed(let version) = remote, let snapshot else { throw SyncError(.noVault, "nothing stored on the server") }
        let opened = try await open(snapshot.blob, keys: [recoveryKey])
        let document = try decode(opened.plaintext)
        var state = opened.state
        for entry in state.entries where entry.kekID == deadKeyID ?? "" {
            state = try envelopeCall { try sealer.revoke(kekID: entry.kekID, in: state) }
        }
        state = try await envelopeCall { try await sealer.enroll(device, label: deviceLabel, in: state) }
        let sealed = try await envelopeCall { try await sealer.seal(encode(document), over: state, keys: [device, recoveryKey]) }
        let saved = try await upload(sealed, document: document, precondition: .ifMatch(syncID: version))
        return .restored(version: saved)
    }

    /// Revokes an entry right after a fresh load: drops it and rotates the DEK, re-wrapping for
    /// every entry that can be wrapped without its holder (plus `additionalKeys`); reports the rest.
    ///
    /// - Throws: `SyncError` `.invalidInput` for an unknown or last entry, and the others `sync` throws.
    public func revoke(kekID: String, additionalKeys: [any KeyWrapping] = []) async throws(SyncError) -> SyncReport {
        _ = try await sync()
        let record = store.syncRecord()
        guard let version = record.syncedVersion, let working = try store.workingCopy() else {
            throw SyncError(.noVault, "nothing synced to revoke from")
        }
        let state = try await openSynced()
        let remaining: VaultState
        do { remaining = try sealer.revoke(kekID: kekID, in: state) } catch {
            throw SyncError(.invalidInput, error.reason)
        }
        let device = try store.deviceKeyCreatingIfNeeded()
        let sealed = try await envelopeCall {
            try await sealer.rotateDEK(encode(working), over: remaining, keys: [device] + additionalKeys)
        }
        let saved = try await upload(sealed, document: working, precondition: .ifMatch(syncID: version))
        return .rotated(version: saved, skipped: sealed.rotation?.skipped ?? [])
    }

    /// The entries of the last synced vault, as a device list.
    ///
    /// - Throws: `SyncError` `.noVault` before a sync.
    public func devices() throws(SyncError) -> [DeviceEntry] {
        guard let blob = store.syncedBlob() else { throw SyncError(.noVault, "sync first") }
        let envelope: VaultEnvelope
        do { envelope = try VaultEnvelope(parsing: blob) } catch { throw SyncError(.tampered, error.reason) }
        let ownID = try? store.deviceKey()?.kekID
        return envelope.entries.map { entry in
            let isRecovery: Bool
            switch entry.scheme {
            case .a256kw(.recoveryCode), .a256kw(.passphrase): isRecovery = true
            default: isRecovery = false
            }
            return DeviceEntry(kekID: entry.kekID, label: entry.label ?? "", algorithm: entry.algorithm?.rawValue ?? "seed",
                               created: entry.created, isThisDevice: entry.kekID == ownID, isRecoveryPath: isRecovery)
        }
    }

    /// Which entries this device can use, and a warning when the vault has fewer than two independent ways in.
    ///
    /// - Throws: `SyncError` `.noVault` before a sync.
    public func keyHealth() throws(SyncError) -> KeyHealth {
        let entries = try devices()
        let deviceKeys = entries.filter { !$0.isRecoveryPath }.count
        let recoveryPaths = entries.filter(\.isRecoveryPath).count
        let warning: String? = deviceKeys + recoveryPaths < 2
            ? "only one way into this vault: losing it loses the vault; add a recovery code or another device"
            : recoveryPaths == 0 ? "no recovery code or passphrase: if every device is lost, the vault is lost" : nil
        return KeyHealth(usableHere: entries.filter(\.isThisDevice).map(\.kekID), deviceKeys: deviceKeys,
                         recoveryPaths: recoveryPaths, warning: warning)
    }

    // MARK: - Plumbing

    /// Loads fresh, applies `change` to the recipients, and saves over the version just loaded.
    private func changeRecipients(_ change: (VaultState) async throws(SyncError) -> VaultState) async throws(SyncError) -> SyncReport {
        _ = try await sync()
        guard let version = store.syncRecord().syncedVersion, let working = try store.workingCopy() else {
            throw SyncError(.noVault, "nothing synced yet")
        }
        let state = try await change(try await openSynced())
        let sealed = try await envelopeCall { try await sealer.seal(encode(working), over: state) }
        return .pushed(version: try await upload(sealed, document: working, precondition: .ifMatch(syncID: version)))
    }

    private func openSynced() async throws(SyncError) -> VaultState {
        guard let blob = store.syncedBlob() else { throw SyncError(.noVault, "nothing synced yet") }
        return try await open(blob).state
    }

    private func open(_ blob: Data, extraKeys: [any KeyEncryptionKey] = []) async throws(SyncError) -> VaultOpener.OpenedVault {
        guard let device = try store.deviceKey() else {
            guard !extraKeys.isEmpty else { throw SyncError(.noAccess, "this device has no key; pair it or recover") }
            return try await open(blob, keys: extraKeys)
        }
        return try await open(blob, keys: [device] + extraKeys)
    }

    private func open(_ blob: Data, keys: [any KeyEncryptionKey]) async throws(SyncError) -> VaultOpener.OpenedVault {
        try await envelopeCall { try await opener.open(blob, vaultID: Self.vaultID, keys: keys) }
    }

    /// Saves a sealed vault and, once the server accepted it, records it as the new synced state.
    private func upload(_ sealed: VaultSealer.SealedVault, document: VaultDocument,
                        precondition: BackupClient.Precondition) async throws(SyncError) -> String {
        let version: String
        do { version = try await backup.save(sealed.blob, precondition: precondition) } catch {
            throw SyncError(.server, "saving the vault failed", backupError: error)
        }
        try await envelopeCall { try await sealer.markAccepted(sealed) }
        try store.saveSynced(document, blob: sealed.blob)
        try store.saveWorkingCopy(document)
        try store.save(LocalVaultStore.SyncRecord(syncedVersion: version, hasLocalEdits: false, nextAttemptAt: nil))
        return version
    }

    private func encode(_ document: VaultDocument) -> Data {
        JSONSerializer.data(of: document.json)
    }

    private func decode(_ plaintext: Data) throws(SyncError) -> VaultDocument {
        do { return try VaultDocument(json: try JSONParser().parse(plaintext)) } catch {
            throw SyncError(.invalidInput, "the vault's contents are not a keyed vault document")
        }
    }

    /// Runs an envelope operation, turning its errors into the `SyncError` the app acts on.
    private func envelopeCall<T>(_ body: () async throws -> T) async throws(SyncError) -> T {
        do {
            return try await body()
        } catch let error as SyncError {
            throw error
        } catch let error as VaultEnvelopeError {
            switch error.code {
            case .rollback: throw SyncError(.rollbackDetected, error.reason)
            case .recipientsAltered, .timestampAltered, .hintAltered, .counterAltered, .ciphertextAltered, .malformed, .invalidShape,
                .invalidJSON:
                throw SyncError(.tampered, error.reason)
            case .noMatchingKey, .unwrapFailed: throw SyncError(.noAccess, error.reason)
            case .invalidated: throw SyncError(.keyInvalidated, error.reason)
            case .blobTooLarge: throw SyncError(.tooLarge, error.reason)
            default: throw SyncError(.localStorage, error.reason)
            }
        } catch {
            throw SyncError(.localStorage, "\(type(of: error))")
        }
    }

    private func envelopeCall<T>(_ body: () throws -> T) throws(SyncError) -> T {
        do {
            return try body()
        } catch let error as VaultEnvelopeError {
            throw SyncError(.invalidInput, error.reason)
        } catch {
            throw SyncError(.localStorage, "\(type(of: error))")
        }
    }
}
