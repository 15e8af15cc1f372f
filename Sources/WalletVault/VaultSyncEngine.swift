import Foundation
import VaultCore
import VaultCrypto
import VaultEnvelope
import VaultJSON
import VaultWire

/// The seed's client flow made safe: creates the vault, keeps this device and the server in step
/// without ever overwriting newer content silently, enrolls and revokes devices, and recovers.
///
/// Every save names the version it was based on (`If-Match`), so a racing device produces a 409
/// that sends the round back to loading and merging rather than overwriting.
///
/// Edits stay possible while a sync awaits the network or the app (a phone syncs in the background while its user
/// edits), so the actor's reentrancy is handled, not avoided: operations that talk to the server (`sync`,
/// `createVault`, `approve`, `recover`, `revoke`, `restoreVersion`, `eraseAccount`) run one at a time in call order,
/// and every edit bumps a generation counter that each write-back compares with the one it read. A write-back that
/// finds a newer edit never overwrites it: a restore or a merge whose upload has not started goes round again with
/// the edit in, and after an accepted upload the edit is replayed onto what was saved and stays pending.
public actor VaultSyncEngine {
    /// Decides a conflict the merge cannot: keep this device's, keep the cloud's, or merge.
    public typealias ConflictHandler = @Sendable (ConflictContext) async -> ConflictResolution

    /// The counter-store key of the one vault a profile holds.
    static let vaultID = "vault"
    /// Rounds one `sync` may take when racing devices keep answering 409.
    static let maxRounds = 5

    private let store: LocalVaultStore
    private let keys: any DeviceKeyStore
    private let backup: BackupClient
    private let counters: FileCounterStore
    private let sealer: VaultSealer
    private let opener: VaultOpener
    private let planner: SyncPlanner
    private let conflictHandler: ConflictHandler?
    private let clock: any WalletClock
    private let deviceLabel: String
    /// The iCloud Keychain recovery key's store, when the app offers it; nothing is stored until
    /// `enableSyncedRecoveryKey()`.
    private let syncedRecoveryKey: SyncedRecoveryKey?
    /// Bumped by every edit; a write-back compares it with the value its operation read.
    private var editGeneration: UInt64 = 0
    /// The synced version last found to hold this device's own entry, and that key's `kek_id`: an up-to-date sync
    /// parses the synced blob (up to 1 MiB) for it once per version, not at every sync.
    private var enrolmentFound: (version: String, kekID: String)?
    /// Whether a server operation is running; the others wait in `waitingOperations`, first come first served.
    private var operationRunning = false
    private var waitingOperations: [CheckedContinuation<Void, Never>] = []

    /// The working copy as an operation read it, with the edit generation it was read at.
    private struct WorkingRead {
        let document: VaultDocument?
        let generation: UInt64
    }

    /// Creates an engine for the profile in `store`, with this device's key in `deviceKeys` (the store's own key
    /// file when nil; on Apple platforms, a `PlatformDeviceKeyStore`). `syncedRecoveryKey` (on Apple platforms over
    /// an `ICloudKeychainKeyStore`) lets the app offer the iCloud Keychain recovery key; passing it stores nothing.
    ///
    /// - Throws: `SyncError` `.localStorage` when the profile's counter file is unreadable.
    public init(
        store: LocalVaultStore, deviceKeys: (any DeviceKeyStore)? = nil, backup: BackupClient, deviceLabel: String,
        maxBlobBytes: Int = 1_048_576, policy: SyncPlanner.Policy = .threeWayMerge, conflictHandler: ConflictHandler? = nil,
        clock: any WalletClock = SystemWalletClock(), syncedRecoveryKey: SyncedRecoveryKey? = nil
    ) throws(SyncError) {
        self.store = store
        keys = deviceKeys ?? store
        self.backup = backup
        counters = try store.counterStore()
        sealer = VaultSealer(counterStore: counters, hint: deviceLabel, maxBlobBytes: maxBlobBytes, clock: { clock.now() })
        opener = VaultOpener(counterStore: counters, maxBlobBytes: maxBlobBytes)
        planner = SyncPlanner(policy: policy)
        self.conflictHandler = conflictHandler
        self.clock = clock
        self.deviceLabel = deviceLabel
        self.syncedRecoveryKey = syncedRecoveryKey
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
        // Pending before the edit is written: cut short between the two, a pending flag over an unchanged copy costs
        // one needless save, while an edit written under no flag would never be saved and be overwritten by a restore.
        var record = store.syncRecord()
        if !record.hasLocalEdits {
            record.hasLocalEdits = true
            try store.save(record)
        }
        try store.saveWorkingCopy(document)
        editGeneration &+= 1
    }

    /// The sync bookkeeping (last synced version, pending edits, next allowed attempt).
    public func status() -> LocalVaultStore.SyncRecord {
        store.syncRecord()
    }

    /// Judges a blob the server serves against the counters this device accepted, without opening it (for a status
    /// line: a rolled-back blob is not "newer").
    public func assess(_ blob: Data) async -> RemoteAssessment {
        let envelope: VaultEnvelope
        do throws(VaultEnvelopeError) { envelope = try VaultEnvelope(parsing: blob) } catch { return .unreadable(reason: error.reason) }
        let highest = await counters.highestCounter(for: Self.vaultID)
        guard let counter = envelope.counter else { return highest > 0 ? .older(counter: nil, highest: highest) : .newer }
        return counter < highest ? .older(counter: counter, highest: highest) : .newer
    }

    // MARK: - Creating

    /// Creates the vault on the server, wrapped for this device's key and the recovery paths given.
    ///
    /// A create whose answer was lost is taken as saved when the server holds exactly the blob sent, also when the
    /// client's resend of it met the 409 its first attempt caused. When that could not be learnt either (the check's
    /// load failed too), the create fails, and calling it (or `sync()`) again adopts the vault of that attempt if the
    /// server holds its exact bytes (kept on this device until then).
    /// - Throws: `SyncError` `.server` with `.conflict` when another vault already exists (pair or recover instead),
    ///   `.server` when the server cannot be reached, `.localStorage`; `.invalidInput` when an earlier attempt was
    ///   adopted but `recoveryPaths` names a path it was not sealed for (the vault is created: replace the paths).
    public func createVault(recoveryPaths: [(key: any KeyWrapping, label: String)] = []) async throws(SyncError) -> SyncReport {
        try await exclusively { () async throws(SyncError) -> SyncReport in
            let device = try keys.deviceKeyCreatingIfNeeded()
            if let pending = store.pendingCreate(), let adopted = try await adoptPendingCreate(pending, device: device) {
                // Adopted as the first attempt sealed it: a retry that asks for other recovery paths (a new code shown
                // to the user) must not be told they are in.
                let entries = Set(adopted.state.entries.map(\.kekID))
                guard recoveryPaths.allSatisfy({ entries.contains($0.key.kekID) }) else {
                    throw SyncError(
                        .invalidInput,
                        "the vault was created by an earlier attempt, with the recovery paths given then; call "
                            + "replaceRecoveryPaths(with:) to put these in their place")
                }
                return .created(version: adopted.version)
            }
            let working = try readWorking()
            let document = working.document ?? VaultDocument()
            let recipients =
                [VaultSealer.Recipient(device, label: deviceLabel)]
                + recoveryPaths.map { VaultSealer.Recipient($0.key, label: $0.label) }
            let sealed = try await envelopeCall { try await sealer.create(encode(document), vaultID: Self.vaultID, recipients: recipients) }
            try store.savePendingCreate(sealed.blob)
            let version = try await upload(sealed, document: document, basedOn: working, precondition: .absent)
            try store.clearPendingCreate()
            return .created(version: version)
        }
    }

    /// Adopts an earlier create whose outcome was not learnt, when the server holds exactly its blob: its counter
    /// and anchor are recorded as an accepted upload's are, and the working copy, which descends from the content
    /// sealed, stays as it is, pending when it changed since. When the server holds nothing, the same bytes are sent
    /// again first. Returns the version and its state, or nil (the pending create forgotten) when the server holds
    /// another vault.
    ///
    /// The byte comparison is what makes the vault this device's own: opened without it, a vault read through a
    /// public-key entry with no anchor pinned would be any writer's that knows the device's public key.
    /// - Throws: `SyncError` `.server` when the server cannot be asked (the pending create is kept for the next try);
    ///   what opening it throws (the pending create forgotten when retrying cannot cure that).
    private func adoptPendingCreate(_ pending: Data, device: any DeviceKey) async throws(SyncError)
        -> (version: String, state: VaultState)?
    {
        let opened: VaultOpener.OpenedVault
        let document: VaultDocument
        do throws(SyncError) {
            opened = try await envelopeCall {
                try await opener.openForConfirmation(pending, vaultID: Self.vaultID, keys: device.unwrappingKeys)
            }
            document = try decode(opened.plaintext)
        } catch {
            // A verdict on the bytes (no entry for this key, an altered blob) stays the same however often it is
            // tried: kept, the pending create would fail every sync from now on.
            if !Self.mayPass.contains(error.code) { try store.clearPendingCreate() }
            throw error
        }
        var holding = try await versionHolding(pending)
        if case .nothing = holding {
            // The first attempt may still be on its way (a client that gave up on a slow server or proxy): the same
            // bytes again, not a new vault, so that whichever lands is this device's own.
            do {
                holding = .exactly(
                    version: try await backup.save(
                        pending, precondition: .absent, writer: WriterKeys(basis: nil, next: opened.state.identity)))
            } catch .conflict {
                holding = try await versionHolding(pending)
            } catch {
                throw Self.serverError("sending the earlier create again failed", error)
            }
        }
        guard case .exactly(let version) = holding else {
            try store.clearPendingCreate()
            return nil
        }
        try await envelopeCall { try await sealer.markAccepted(opened.state) }
        let working = try store.workingCopy() ?? document
        try store.commitSynced(
            document, blob: pending, working: working,
            record: LocalVaultStore.SyncRecord(syncedVersion: version, hasLocalEdits: working != document, nextAttemptAt: nil))
        try store.clearPendingCreate()
        return (version, opened.state)
    }

    /// What the server holds, measured against a blob this device sent.
    private enum Holding {
        /// Exactly the blob, as this version.
        case exactly(version: String)
        /// No vault.
        case nothing
        /// Another vault (or another version of it).
        case other
    }

    /// What the server holds, against `blob`.
    ///
    /// - Throws: `SyncError` `.server` when the server cannot be asked.
    private func versionHolding(_ blob: Data) async throws(SyncError) -> Holding {
        do {
            guard case .blob(let snapshot) = try await backup.load() else { return .other }
            return snapshot.blob == blob ? .exactly(version: snapshot.syncID) : .other
        } catch .notFound {
            return .nothing
        } catch {
            throw Self.serverError("checking the earlier create failed", error)
        }
    }

    /// The failures of an operation that the same operation may get past later: the device's storage, its key's
    /// holder (absent, declining, or the key dead until a recovery), the server.
    private static let mayPass: Set<SyncError.Code> = [.localStorage, .notNow, .authenticationCanceled, .keyInvalidated, .server]

    // MARK: - Syncing

    /// One sync: load, decide, and restore, save or merge, retrying when another device raced this one.
    ///
    /// A save that enrolls this device's own key (seed §5) and failed after a restore is made again by the next sync,
    /// also when nothing else changed.
    /// - Throws: `SyncError`: `.noAccess` (pair or recover), `.keyInvalidated`, `.rollbackDetected`,
    ///   `.tampered`, `.unresolvedConflict`, `.tooLarge`, `.server`.
    public func sync() async throws(SyncError) -> SyncReport {
        try await exclusively { () async throws(SyncError) -> SyncReport in try await syncNow() }
    }

    // MARK: - Live changes

    /// Seconds each long-poll of `changes()` asks the server to hold it: below the 30 s a transport's idle timeout
    /// allows by default, and the server's maximum is 60.
    public static let changesWaitSeconds = 25
    /// The longest pause `changes()` makes after failures in a row.
    static let changesMaxBackoffSeconds = 60.0

    /// The changes this device takes in while the sequence is iterated, each as `sync()` reports it.
    ///
    /// It long-polls the server (`load` with `wait`) and, whenever the stored version moves, runs `sync()`: another
    /// device's save is restored or merged, a local edit is never overwritten (it is merged, replayed, or pushed), and
    /// the conflict handler is asked when the merge cannot decide. A report that changed nothing (`.upToDate`) is not
    /// delivered. Failures that may pass (the network, a 5xx) pause 1 s, doubling to 60 s, and so does a long-poll
    /// that found nothing and came back in under half its wait (a server or proxy that ignores `wait`); a 429 pauses its
    /// `Retry-After`, at least 1 s. A `.rateLimited` report counts as such a failure and pauses the longer of its step and the time
    /// left until the next attempt, at most 60 s, then syncs again: the pending edit cannot be saved before then, and
    /// each of those syncs still takes in what other devices saved. Cancelling the task that iterates ends the sequence and the
    /// long-poll in flight. Call it while the app is in the foreground.
    ///
    /// - Throws (through the sequence): the `SyncError` retrying cannot cure: no access, a removed device, an
    ///   invalidated key, a rollback, a fork, tampering, no vault on the server, a vault too large for the server, and
    ///   `.server` with `.unauthorized` (sign the user in again, then iterate anew).
    public nonisolated func changes(waitSeconds: Int = changesWaitSeconds) -> AsyncThrowingStream<SyncReport, any Error> {
        AsyncThrowingStream { continuation in
            let watcher = Task { await watchChanges(waitSeconds: waitSeconds, into: continuation) }
            continuation.onTermination = { _ in watcher.cancel() }
        }
    }

    /// The loop behind `changes()`: off the actor while a long-poll waits, so edits and other operations go on.
    private nonisolated func watchChanges(
        waitSeconds: Int, into continuation: AsyncThrowingStream<SyncReport, any Error>.Continuation
    ) async {
        var backoffSeconds = 1.0
        // A sync first: it pushes what is pending and learns the version the long-polls then wait on.
        var syncDue = true
        while !Task.isCancelled {
            let pause: Double
            // A long-poll's 429 says how long to wait by itself and leaves the failure backoff as it was.
            var countsAsFailure = true
            do throws(SyncError) {
                if !syncDue {
                    let known = await status().syncedVersion
                    let asked = clock.now()
                    syncDue = try await remoteMoved(from: known, waitSeconds: waitSeconds)
                    let heldMilliseconds = clock.now().millisecondsSinceEpoch - asked.millisecondsSinceEpoch
                    // A server or proxy that ignores `wait` answers at once: without a pause this loop would flood it.
                    if !syncDue && heldMilliseconds < Int64(waitSeconds) * 500 {
                        throw SyncError(.server, "the server answered a long-poll without waiting")
                    }
                    // A move found is no success yet: the sync it leads to decides, or a rate-limited device's backoff
                    // would start over at every long-poll.
                    if !syncDue { backoffSeconds = 1 }
                    continue
                }
                // `sync` runs exclusively with the other operations and handles edits made while it awaits.
                let report = try await sync()
                syncDue = false
                if case .upToDate = report {} else { continuation.yield(report) }
                guard case .rateLimited(let nextAttempt) = report else {
                    backoffSeconds = 1
                    continue
                }
                // The edits may be saved only at the next attempt: the loop waits for that time (checking again within
                // a minute) and then syncs again rather than long-polls, since the version a merge met is the synced
                // one by now and no long-poll would find a change to start that sync.
                let secondsLeft = Double(nextAttempt.millisecondsSinceEpoch - clock.now().millisecondsSinceEpoch) / 1000
                pause = min(Self.changesMaxBackoffSeconds, max(backoffSeconds, secondsLeft))
                syncDue = true
            } catch {
                if Task.isCancelled { break }
                if case .rateLimited(let seconds)? = error.backupError {
                    // At least a second: a `Retry-After: 0` (from a proxy) would have the loop ask again at once.
                    pause = max(Double(seconds), 1)
                    countsAsFailure = false
                } else if (error.code == .server && error.backupError != .unauthorized) || error.code == .notNow {
                    // A refused session is not retried: each round would ask the app's OIDC token source again, which
                    // may prompt the user; the app signs the user in and iterates anew.
                    pause = backoffSeconds
                } else {
                    continuation.finish(throwing: error)
                    return
                }
            }
            if countsAsFailure { backoffSeconds = min(backoffSeconds * 2, Self.changesMaxBackoffSeconds) }
            do { try await clock.sleep(seconds: pause) } catch { break }
        }
        continuation.finish()
    }

    /// Long-polls for a version other than `known`; whether one (or an erasure) was found.
    private nonisolated func remoteMoved(from known: String?, waitSeconds: Int) async throws(SyncError) -> Bool {
        do {
            switch try await backup.load(ifNoneMatch: known, waitSeconds: waitSeconds) {
            case .notModified: return false
            case .blob(let snapshot): return snapshot.syncID != known
            }
        } catch .notFound {
            return true
        } catch {
            throw SyncError(.server, "waiting for changes failed", backupError: error)
        }
    }

    /// `sync` for an operation that already runs exclusively.
    private func syncNow() async throws(SyncError) -> SyncReport {
        // A dead key is otherwise noticed only when a new version must be opened: a device whose copy is current
        // would report "up to date" while it can neither save nor read anything newer. Reading it prompts no one.
        let device = try keys.currentDeviceKey()
        try requireAntiRollbackState()
        // A create whose outcome was not learnt: without adopting it here, its own vault would read as one this device
        // was never confirmed for (no anchor pinned), and the app would be told to pair or recover.
        if let pending = store.pendingCreate(), let device { _ = try await adoptPendingCreate(pending, device: device) }
        return try await reportingRateLimit { () async throws(SyncError) -> SyncReport in
            for _ in 0..<Self.maxRounds {
                if let report = try await syncRound() { return report }
            }
            throw SyncError(
                .server, "other devices kept saving; try again", backupError: .conflict(currentSyncID: nil, currentUpdatedUtc: nil))
        }
    }

    /// `body`'s report, or `.rateLimited` when its save met the server's hourly cap: the local copy stays
    /// authoritative, and the time the server allows the next save is recorded, so that syncs until then send none
    /// (they still load).
    /// - Throws: the other `SyncError`s `body` throws.
    private func reportingRateLimit(_ body: () async throws(SyncError) -> SyncReport) async throws(SyncError) -> SyncReport {
        do throws(SyncError) {
            return try await body()
        } catch {
            guard let next = try recordedRateLimit(error) else { throw error }
            return .rateLimited(nextAttempt: next)
        }
    }

    /// The next allowed save's time, recorded, when `error` is the server's hourly cap; nil for any other failure.
    /// - Throws: `SyncError` `.localStorage` when the record cannot be written.
    private func recordedRateLimit(_ error: SyncError) throws(SyncError) -> UTCTimestamp? {
        guard case .rateLimited(let seconds)? = error.backupError else { return nil }
        let next = UTCTimestamp(millisecondsSinceEpoch: clock.now().millisecondsSinceEpoch + Int64(seconds) * 1000)
        var record = store.syncRecord()
        record.nextAttemptAt = next.millisecondsSinceEpoch
        try store.save(record)
        return next
    }

    /// One round; nil when a racing save (409) asks for another.
    ///
    /// While the server's hourly cap holds this device's saves back, a round still loads: another device's save is
    /// merged under the pending edits and becomes the synced version, and only the save waits. A round that loaded
    /// nothing then left every operation of the pause (a revocation, a restore, an erasure, the synced recovery key)
    /// working over a version the server may have replaced, for up to an hour.
    private func syncRound() async throws(SyncError) -> SyncReport? {
        let before = store.syncRecord()
        let (remote, snapshot) = try await loadRemote(after: before.syncedVersion)
        // Read after the load, so an edit made while it was in flight takes part in this round's plan.
        let record = store.syncRecord()
        let heldUntil = record.nextAttemptAt.flatMap { next in
            record.hasLocalEdits && clock.now().millisecondsSinceEpoch < next ? UTCTimestamp(millisecondsSinceEpoch: next) : nil
        }
        let working = try readWorking()
        let local = SyncPlanner.LocalState(
            syncedVersion: record.syncedVersion, hasLocalEdits: record.hasLocalEdits,
            hasVault: working.document != nil)
        if remote == .empty, working.document == nil {
            throw SyncError(.noVault, "no vault is stored for this account")
        }
        do throws(SyncError) {
            switch planner.plan(local: local, remote: remote) {
            case .upToDate:
                return try await enrollInSyncedVersion(record: record, working: working) ?? .upToDate(version: record.syncedVersion ?? "")
            case .createRemote:
                throw SyncError(.noVault, "no vault on the server; create one")
            case .push(let basedOn):
                if let heldUntil { return .rateLimited(nextAttempt: heldUntil) }
                guard let document = working.document else { return nil }
                let synced = try await openSynced()
                let state = try await enrollingThisDevice(in: synced) ?? synced
                let sealed = try await envelopeCall { try await sealer.seal(encode(document), over: state) }
                return .pushed(
                    version: try await upload(
                        sealed, document: document, basedOn: working,
                        precondition: .ifMatch(syncID: basedOn)))
            case .restore(let version):
                guard let snapshot else { return nil }
                return try await restore(snapshot, version: version, replacing: working)
            case .merge(let version):
                guard let snapshot, working.document != nil else { return nil }
                return try await merge(snapshot, version: version, working: working, savingNotBefore: heldUntil)
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

    /// Replaces the working copy with the server's; nil (another round) when an edit came in since `working` was read.
    private func restore(_ snapshot: BackupClient.Snapshot, version: String, replacing working: WorkingRead) async throws(SyncError)
        -> SyncReport?
    {
        let opened = try await open(snapshot.blob)
        let document = try decode(opened.plaintext)
        // The edit makes this a merge, which the next round plans.
        guard working.generation == editGeneration else { return nil }
        try store.commitSynced(
            document, blob: snapshot.blob, working: document,
            record: LocalVaultStore.SyncRecord(syncedVersion: version, hasLocalEdits: false, nextAttemptAt: nil))
        // Seed §5: the first restore on a device enrolls that device's own key, then saves. What was restored is read
        // before the enrolment's await (a prompt, for a Secure Enclave key): an edit made during it is then replayed.
        let restored = WorkingRead(document: document, generation: editGeneration)
        guard let enrolled = try await enrollingThisDevice(in: opened.state) else { return .restored(version: version) }
        let sealed = try await envelopeCall { try await sealer.seal(encode(document), over: enrolled) }
        return .restored(version: try await upload(sealed, document: document, basedOn: restored, precondition: .ifMatch(syncID: version)))
    }

    /// `state` with this device's own entry enrolled (seed §5), and the pairing entry that stood in for it and the
    /// entries of this device's dead keys that a pairing request replaced dropped; nil when there is nothing to change
    /// or this device holds no key.
    ///
    /// Until it is saved, a device paired through its key's public half (a Secure Enclave key, whose own self-ECDH
    /// entry only its holder can write) is a member only through that pairing entry. A restore enrolls it; every sync
    /// round that saves enrolls it again while the version it saves over lacks it, as when the restore's save failed.
    /// - Throws: `SyncError` when this device's key cannot be read or cannot wrap (`.notNow`, `.authenticationCanceled`,
    ///   `.keyInvalidated`).
    private func enrollingThisDevice(in state: VaultState) async throws(SyncError) -> VaultState? {
        guard let device = try keys.currentDeviceKey() else { return nil }
        let enrolledAlready = state.entries.contains { $0.kekID == device.kekID }
        let leaving = entriesLeavingAtEnrolment(of: device)
        guard !enrolledAlready || state.entries.contains(where: { leaving.contains($0.kekID) }) else {
            // The save that enrolled this key dropped the dead entries with it: their record has no use left.
            if !store.deadDeviceKeyIDs().isEmpty { try store.forgetDeadDeviceKeyIDs() }
            return nil
        }
        var enrolled = state
        if !enrolledAlready {
            enrolled = try await envelopeCall { [enrolled] in try await sealer.enroll(device, label: deviceLabel, in: enrolled) }
        }
        return try droppingEntries(of: leaving, from: enrolled)
    }

    /// The entries this device's enrolment drops: those of its keys that died and were replaced (seed §7), and the
    /// pairing entry to its own key's public half, which its own entry replaces (no one loses access); a member
    /// approved again (one that must confirm again) has both until that save.
    private func entriesLeavingAtEnrolment(of device: any DeviceKey) -> [String] {
        let dead = store.deadDeviceKeyIDs().filter { $0 != device.kekID }
        return device.pairingKekID == device.kekID ? dead : dead + [device.pairingKekID]
    }

    /// Saves this device's own entry into the synced version, which the server still holds, when it lacks it or still
    /// holds an entry the enrolment drops (a restore whose enrolment save failed); nil when there is nothing to save.
    ///
    /// The synced blob's entry list is read without opening it, so an up-to-date sync of an enrolled device decrypts
    /// nothing. While the server's hourly cap holds saves back the enrolment waits, as an edit does.
    /// - Throws: `SyncError` as a push does: `.server` when the save fails, and what opening the synced copy throws.
    private func enrollInSyncedVersion(record: LocalVaultStore.SyncRecord, working: WorkingRead) async throws(SyncError)
        -> SyncReport?
    {
        guard let version = record.syncedVersion, let document = working.document, let device = try keys.currentDeviceKey(),
            enrolmentFound?.version != version || enrolmentFound?.kekID != device.kekID,
            let synced = store.syncedBlob().flatMap({ try? VaultEnvelope(parsing: $0) })
        else { return nil }
        let leaving = entriesLeavingAtEnrolment(of: device)
        guard
            !synced.entries.contains(where: { $0.kekID == device.kekID })
                || synced.entries.contains(where: { leaving.contains($0.kekID) })
        else {
            enrolmentFound = (version, device.kekID)
            return nil
        }
        if let next = record.nextAttemptAt, clock.now().millisecondsSinceEpoch < next { return nil }
        guard let enrolled = try await enrollingThisDevice(in: try await openSynced()) else { return nil }
        let sealed = try await envelopeCall { try await sealer.seal(encode(document), over: enrolled) }
        return .pushed(version: try await upload(sealed, document: document, basedOn: working, precondition: .ifMatch(syncID: version)))
    }

    /// How a merge of this device's edits with the cloud's content ends.
    private enum MergeOutcome {
        /// Save this document; `conflicts` lists the items a decision settled.
        case save(VaultDocument, conflicts: [String])
        /// Take the cloud's content and drop this device's edits.
        case takeCloud
    }

    /// Merges `working` (descended from the synced copy) with `cloud`, asking the app when the policy says so.
    ///
    /// The base stays the last version this device's working copy descends from until the merged save is accepted:
    /// after a 409, the next round must merge against the same ancestor, or items the working copy has not seen yet
    /// would look deleted here.
    private func mergeOutcome(working: VaultDocument, cloud: VaultDocument, cloudUpdated: UTCTimestamp) async throws(SyncError)
        -> MergeOutcome
    {
        let base = try store.syncedCopy() ?? VaultDocument()
        let localUpdated = working.items.values.map(\.modifiedAt).max() ?? UTCTimestamp(millisecondsSinceEpoch: 0)
        let result = ThreeWayMerge.merge(base: base, local: working, remote: cloud)
        switch planner.resolve(merge: result, localUpdated: localUpdated, remoteUpdated: cloudUpdated) {
        case .pushMerged: return .save(result.merged, conflicts: result.conflicts)
        case .takeRemote: return .takeCloud
        case .takeLocal: return .save(working, conflicts: result.conflicts)
        case .ask(let items):
            guard let conflictHandler else {
                throw SyncError(.unresolvedConflict, "\(items.count) item(s) changed on both sides: \(items.joined(separator: ", "))")
            }
            let context = ConflictContext(conflictingItems: items, localUpdated: localUpdated, cloudUpdated: cloudUpdated)
            switch await conflictHandler(context) {
            case .keepLocal: return .save(working, conflicts: result.conflicts)
            case .keepCloud: return .takeCloud
            case .merge: return .save(result.merged, conflicts: result.conflicts)
            }
        }
    }

    /// Merges and saves; nil (another round) when an edit came in before the upload could start. With `savingNotBefore`
    /// (the hourly cap's pause) the merge is kept as pending edits over the cloud version, which becomes the synced one,
    /// and nothing is saved.
    private func merge(
        _ snapshot: BackupClient.Snapshot, version: String, working: WorkingRead, savingNotBefore heldUntil: UTCTimestamp?
    ) async throws(SyncError) -> SyncReport? {
        guard let local = working.document else { return nil }
        let opened = try await open(snapshot.blob)
        let cloud = try decode(opened.plaintext)
        let outcome = try await mergeOutcome(working: local, cloud: cloud, cloudUpdated: opened.state.envelope.updatedAt)
        // Merged or decided without the edit: decide again with it (the app may be asked again).
        guard working.generation == editGeneration else { return nil }
        switch outcome {
        case .takeCloud:
            return try await restore(snapshot, version: version, replacing: working)
        case .save(let chosen, let conflicts):
            if let heldUntil {
                try keepPending(chosen, over: cloud, snapshot, version: version, working: working, nextAttemptAt: heldUntil)
                return .rateLimited(nextAttempt: heldUntil)
            }
            let state = try await enrollingThisDevice(in: opened.state) ?? opened.state
            let sealed = try await envelopeCall { try await sealer.seal(encode(chosen), over: state) }
            do throws(SyncError) {
                return .merged(
                    version: try await upload(sealed, document: chosen, basedOn: working, precondition: .ifMatch(syncID: version)),
                    conflicts: conflicts)
            } catch {
                // The cloud version was opened, and the opener accepted its counter: it becomes the synced one, the
                // merge pending on top. Kept on the older one, every operation opening the synced copy until the next
                // successful save (for a 429, an hour) reported a rollback.
                try keepPending(chosen, over: cloud, snapshot, version: version, working: working, nextAttemptAt: nil)
                throw error
            }
        }
    }

    /// Makes the opened cloud version the synced one with `merged` (and any edit made since `working` was read) pending
    /// on top, to be saved no earlier than `nextAttemptAt`.
    private func keepPending(
        _ merged: VaultDocument, over cloud: VaultDocument, _ snapshot: BackupClient.Snapshot, version: String,
        working: WorkingRead, nextAttemptAt: UTCTimestamp?
    ) throws(SyncError) {
        try store.commitSynced(
            cloud, blob: snapshot.blob, working: try workingCopy(over: merged, basedOn: working),
            record: LocalVaultStore.SyncRecord(
                syncedVersion: version, hasLocalEdits: true, nextAttemptAt: nextAttemptAt?.millisecondsSinceEpoch))
    }

    // MARK: - History and erasure

    /// The versions the server keeps, newest first.
    ///
    /// - Throws: `SyncError` `.server`.
    public func history() async throws(SyncError) -> [BackupClient.Version] {
        do { return try await backup.versions() } catch { throw SyncError(.server, "listing the versions failed", backupError: error) }
    }

    /// Saves the content of the kept version `syncID` again, as a new version above the current one.
    ///
    /// Pending edits are saved first (so they stay in the history). The old version is opened with every check but
    /// the anti-rollback counter's, and its items are written over the current document as new changes (items it
    /// lacks are deleted), so every device takes the restore as the newest content. The save names the current
    /// version (`If-Match`): a device that saved meanwhile makes this fail rather than be overwritten.
    /// A save the server's hourly cap refuses throws `.server` with `BackupError.rateLimited`, the next allowed attempt
    /// recorded (`status().nextAttemptAt`) as a sync records it; the operation is not made later by itself.
    /// - Throws: `SyncError` `.server` with `.notFound` for a version not kept, `.conflict` for a racing save;
    ///   `.noAccess` when this device's key has no entry in that version; `.tampered`, and what `sync` throws.
    public func restoreVersion(_ syncID: String) async throws(SyncError) -> SyncReport {
        try await exclusivelyRecordingRateLimit { () async throws(SyncError) -> SyncReport in
            _ = try await syncNow()
            let working = try readWorking()
            guard let current = store.syncRecord().syncedVersion, let document = working.document else {
                throw SyncError(.noVault, "nothing synced to restore over")
            }
            let snapshot: BackupClient.Snapshot
            do throws(BackupError) { snapshot = try await backup.load(version: syncID) } catch {
                throw SyncError(.server, "loading version \(syncID) failed", backupError: error)
            }
            let state = try await openSynced()
            let past = try await openPast(snapshot.blob, checkedAgainst: state.identity)
            let restored = document.replacingContent(with: try decode(past.plaintext), at: clock.now())
            let sealed = try await envelopeCall { try await sealer.seal(encode(restored), over: state) }
            let version = try await upload(sealed, document: restored, basedOn: working, precondition: .ifMatch(syncID: current))
            return .restoredVersion(restoredFrom: syncID, version: version)
        }
    }

    /// Erases the vault and every kept version from the server (right to erasure), then this device's copies.
    ///
    /// Other devices find no vault at their next sync. The device key stays, so this device can create or join
    /// a vault later; the anti-rollback counter of the erased vault is forgotten, or a new vault's first versions
    /// would look like a rollback here.
    /// The erasure syncs first and proves with the current version's write key that this device is a member; the
    /// server refuses it from anyone else (a revoked device that still holds the login), and so from a device that
    /// cannot read the vault, unless the stored version is one from before write keys (FORMAT.md §11.8).
    /// - Throws: `SyncError` `.removedFromVault` when the server wants a proof this device cannot give, `.server`
    ///   when the server refused or failed (nothing local changed then), `.localStorage`; what `sync` throws when the
    ///   sync before the erasure fails otherwise than for want of a readable vault (`.unresolvedConflict`,
    ///   `.authenticationCanceled`, `.notNow`, `.server`): nothing is erased then.
    public func eraseAccount() async throws(SyncError) {
        try await exclusively { () async throws(SyncError) in
            // A member proves it may erase by the write key of the version it reads now (FORMAT.md §11.8). A device
            // that cannot read the vault sends no proof: the server then erases only a vault that names no write key.
            var writer: WriterKeys?
            var storedVersion: String?
            do throws(SyncError) {
                // Also while the hourly cap holds saves back: that sync loads all the same, so the proof goes over
                // the version the server holds (one over a replaced version is refused as if this device had been
                // removed).
                _ = try await syncNow()
                if let version = store.syncRecord().syncedVersion {
                    writer = WriterKeys(basis: try await openSynced().identity, next: nil)
                    storedVersion = version
                }
            } catch  where Self.cannotRead.contains(error.code) {
                // No proof; the server decides (below).
            }
            // Any other failure of the sync (a conflict, a cancelled prompt, the network) is reported as it is, nothing
            // erased: erasing anyway sent no proof, or one over an older version, and a member was told by the 403
            // that it had been removed from its own vault.
            do throws(BackupError) { try await backup.erase(writer: writer, storedSyncID: storedVersion) } catch {
                throw Self.serverError("erasing the vault failed", error)
            }
            try await envelopeCall { try await counters.forget(Self.vaultID) }
            try store.eraseVault(at: clock.now())
            editGeneration &+= 1
        }
    }

    // MARK: - Devices and recovery

    /// The new-device half of pairing: the request to show, for a device that already holds the vault to approve.
    ///
    /// A device whose key died (seed §7: the key item did not come along to a restored phone, or biometry changed)
    /// pairs again with a new key: the dead key's `kek_id` is recorded, and the save after the pairing is confirmed
    /// enrolls the new key and drops the dead entry, as `recover(with:)` does. A member's key is first tried on its own
    /// entry in the synced copy (one Face ID prompt for a Secure Enclave key), because a key that died in place shows
    /// it only in use, and a request carrying it would be approved for a key that can open nothing.
    /// - Throws: `SyncError` `.localStorage` when the device key cannot be created; `.authenticationCanceled` or
    ///   `.notNow` when a member's key could not be tried (nothing changed).
    public func pairingRequest() async throws(SyncError) -> PairingRequest {
        // Exclusive: it may replace the key that a running sync is using.
        try await exclusively { () async throws(SyncError) -> PairingRequest in
            PairingRequest(device: try await workingDeviceKey(), label: deviceLabel)
        }
    }

    /// This device's key while it works, a first key when there is none, or a new key in place of a dead one.
    private func workingDeviceKey() async throws(SyncError) -> any DeviceKey {
        do {
            guard let device = try keys.currentDeviceKey() else { return try keys.newDeviceKey() }
            try await requireWorking(device)
            return device
        } catch  where error.code == .keyInvalidated {
            return try replacingDeadDeviceKey()
        }
    }

    /// Throws `.keyInvalidated` when `device` no longer opens its entry in the synced copy: its own, or the pairing
    /// entry to its public half (a phone whose enrolment save failed is a member through that one only). A key without
    /// either there (a device not yet a member) is taken as it is: trying it would prompt at every request shown.
    private func requireWorking(_ device: any DeviceKey) async throws(SyncError) {
        guard let synced = store.syncedBlob().flatMap({ try? VaultEnvelope(parsing: $0) }) else { return }
        for key in device.unwrappingKeys {
            guard let entry = synced.entries.first(where: { $0.kekID == key.kekID }) else { continue }
            _ = try await envelopeCall { try await key.unwrap(entry) }
            return
        }
    }

    /// A new key in place of this device's dead one, whose `kek_id` is recorded first: the new key's overwrites the
    /// profile's, and the save that drops the dead entry may come only at a later attempt.
    private func replacingDeadDeviceKey() throws(SyncError) -> any DeviceKey {
        if let dead = keys.lastDeviceKeyID() {
            try store.rememberDeadDeviceKeyID(dead)
            // A self-ECDH key's kek_id spells its public key: the pairing entry to that key (a phone whose enrolment
            // save failed reads through it) dies with it, and would otherwise be re-wrapped at every rotation.
            if let raw = Base64URL.decode(dead), raw.count == 64,
                let publicKey = try? P256.KeyAgreement.PublicKey(rawRepresentation: raw)
            {
                try store.rememberDeadDeviceKeyID(PublicKeyRecipient(publicKey).kekID)
            }
        }
        return try keys.newDeviceKey()
    }

    /// `state` without the entries of `kekIDs` it holds, and no DEK rotation: these are this device's own replaced
    /// keys (dead ones, or the pairing entry its own entry replaces), which no one else ever held, and a rotation would
    /// also drop every entry this device cannot re-wrap (FORMAT.md §11.4).
    private func droppingEntries(of kekIDs: [String], from state: VaultState) throws(SyncError) -> VaultState {
        var remaining = state
        for kekID in kekIDs where remaining.entries.contains(where: { $0.kekID == kekID }) {
            remaining = try envelopeCall { [remaining] in try sealer.revoke(kekID: kekID, in: remaining) }
        }
        return remaining
    }

    /// The approving half: wraps the DEK for the requesting device and saves, right after a fresh load.
    ///
    /// A device that is already a member (one that has to confirm the vault again, as after the upgrade to anchored
    /// blobs, FORMAT.md §11.7) keeps its entry: approving it only saves, and `confirmationCode(for:)` is its code.
    /// A save the server's hourly cap refuses throws `.server` with `BackupError.rateLimited`, the next allowed attempt
    /// recorded (`status().nextAttemptAt`) as a sync records it; the operation is not made later by itself.
    /// - Throws: `SyncError` as `sync` does.
    public func approve(_ request: PairingRequest) async throws(SyncError) -> SyncReport {
        try await exclusivelyRecordingRateLimit { () async throws(SyncError) -> SyncReport in
            try await changeRecipients { (state) async throws(SyncError) -> VaultState in
                guard !state.entries.contains(where: { $0.kekID == request.recipient.kekID }) else { return state }
                return try await envelopeCall { try await sealer.enroll(request.recipient, label: request.label, in: state) }
            }
        }
    }

    /// What two devices compare to see a fork (FORMAT.md §11.6, §11.10): the pinned anchor's fingerprint and the
    /// newest version's digest, `epoch 3: 1a2b 3c4d 5e6f 7a8b, version 42: 9c0d 1e2f 3a4b 5c6d`; nil before this
    /// device pinned the vault.
    ///
    /// Two members that synced the same version show the same text exactly when the server served them one
    /// history: each version names its predecessor's digest, so the newest digest covers every version before it.
    ///
    /// - Throws: `SyncError` `.localStorage` when the counter file cannot be read.
    public func vaultFingerprint() async throws(SyncError) -> String? {
        guard let anchor = await counters.anchor(for: Self.vaultID) else { return nil }
        let counter = await counters.highestCounter(for: Self.vaultID)
        // The newest version's digest names every version before it (each names its predecessor's, FORMAT.md §11.10).
        guard let head = await counters.acceptedDigest(for: Self.vaultID, counter: counter) else {
            return "epoch \(anchor.epoch): \(anchor.displayFingerprint)"
        }
        return "epoch \(anchor.epoch): \(anchor.displayFingerprint), version \(counter): \(VaultAnchor.grouped(head))"
    }

    /// The approving half, second step: the six digits the new device must be given, so that it knows the blob it
    /// finds was written by a member of this vault (FORMAT.md §11.4). Call it after `approve` saved.
    ///
    /// The code covers the saved blob and the request's entry. Show it on this screen for the user to type on the
    /// new device; it must never travel through the server, which could then confirm a blob of its own.
    /// - Throws: `SyncError` `.noVault` before anything was synced, `.invalidInput` when the synced vault has no
    ///   entry for the request, and what opening the synced copy throws.
    public func confirmationCode(for request: PairingRequest) async throws(SyncError) -> String {
        try await exclusively { () async throws(SyncError) -> String in
            let state = try await openSynced()
            guard let identity = state.identity, let blob = store.syncedBlob() else {
                throw SyncError(.noVault, "the synced vault has no identity yet: approve the request first")
            }
            guard state.entries.contains(where: { $0.kekID == request.recipient.kekID }) else {
                throw SyncError(.invalidInput, "the synced vault has no entry for this request: approve it first")
            }
            return identity.confirmationCode(forEntry: request.recipient.kekID, blobDigest: Data(SHA256.hash(data: blob)))
        }
    }

    /// Wrong confirmation codes a pairing key survives; the next request is made with a new key.
    public static let maxFailedConfirmations = 3

    /// The new-device half, second step: opens the approved vault without keeping anything, checks `code` (as the
    /// approving device shows it) against the vault's, and only then pins the vault's anchor and restores it.
    ///
    /// After `maxFailedConfirmations` wrong codes a device that is not yet a member drops its pairing key, so the
    /// entry approved for it opens nothing here and pairing starts again with a new request: a server that wrapped
    /// to this key gets that many one-in-a-million guesses, not more.
    /// - Throws: `SyncError` `.confirmationMismatch` when the codes differ (nothing stored; the approving device
    ///   should remove the entry it just approved, which may be an impostor's), `.noAccess` before the approval
    ///   arrived, and what `sync` throws.
    public func confirmPairing(code: String) async throws(SyncError) -> SyncReport {
        try await exclusively { () async throws(SyncError) -> SyncReport in
            guard let device = try keys.currentDeviceKey() else { throw SyncError(.noAccess, "this device has no key; pair it first") }
            let (remote, snapshot) = try await loadRemote(after: nil)
            guard case .changed = remote, let snapshot else { throw SyncError(.noVault, "nothing stored on the server") }
            let opened = try await envelopeCall {
                try await opener.openForConfirmation(snapshot.blob, vaultID: Self.vaultID, keys: device.unwrappingKeys)
            }
            do throws(SyncError) {
                try await envelopeCall { try await opener.confirm(opened, code: code, entryKekID: device.pairingKekID) }
            } catch  where error.code == .confirmationMismatch {
                throw try await countFailedConfirmation()
            }
            var record = store.syncRecord()
            record.failedConfirmations = nil
            try store.save(record)
            // This device joined the vault just pinned: a create of its own whose outcome it never learnt is given up
            // (adopting it now would meet the other vault's anchor and fail the pairing that succeeded).
            try store.clearPendingCreate()
            return try await syncNow()
        }
    }

    /// Counts a wrong confirmation code and returns the error to report; past the cap, a device that is not yet a
    /// member replaces its pairing key.
    private func countFailedConfirmation() async throws(SyncError) -> SyncError {
        let isMember = await counters.anchor(for: Self.vaultID) != nil || store.syncedBlob() != nil
        // Read after the await: an edit made while it was suspended set the pending flag, which a record read before
        // it and saved here would clear, and a later restore would then overwrite the edit.
        var record = store.syncRecord()
        let failed = (record.failedConfirmations ?? 0) + 1
        let advice = "on the approving device, remove the device just approved (it may be an impostor's)"
        guard failed >= Self.maxFailedConfirmations, !isMember else {
            record.failedConfirmations = failed
            try store.save(record)
            let left = Self.maxFailedConfirmations - failed
            return SyncError(
                .confirmationMismatch,
                "the code differs from the one this vault gives; nothing was stored. If the code was typed right, \(advice). "
                    + (isMember ? "" : "\(left) more tries with this pairing request"))
        }
        _ = try keys.newDeviceKey()
        record.failedConfirmations = nil
        try store.save(record)
        return SyncError(
            .confirmationMismatch,
            "\(failed) wrong codes: this pairing request is void and nothing was stored; \(advice), then start pairing again")
    }

    /// Recovers this device with a recovery key (recovery code, passphrase) after its device key went missing or died.
    ///
    /// It opens the server's vault with that key, enrolls a fresh device key, drops this device's dead entry, and
    /// saves. Edits this device made before its key died are kept: they are merged with the server's content (asking
    /// the app on conflicts, as `sync` does) and saved with the new key. A recovery that fails can be called again:
    /// one that failed before the new key was made (a wrong code, no network, a conflict left open) leaves this device
    /// with the key it had, and one whose save failed still drops the dead entry when retried.
    /// - Throws: `SyncError` `.noAccess` when the key does not open the vault, `.unresolvedConflict` when edits
    ///   conflict and no handler decides, and the others `sync` throws.
    public func recover(with recoveryKey: any KeyEncryptionKey) async throws(SyncError) -> SyncReport {
        try await exclusivelyRecordingRateLimit { () async throws(SyncError) -> SyncReport in
            let (remote, snapshot) = try await loadRemote(after: nil)
            guard case .changed(let version) = remote, let snapshot else { throw SyncError(.noVault, "nothing stored on the server") }
            let opened = try await open(snapshot.blob, keys: [recoveryKey])
            // This device now belongs to the vault it recovered: a create of its own whose outcome it never learnt
            // is given up, as after a pairing.
            try store.clearPendingCreate()
            let cloud = try decode(opened.plaintext)
            let working = try readWorking()
            var document = cloud
            if store.syncRecord().hasLocalEdits, let local = working.document,
                case .save(let merged, _) = try await mergeOutcome(
                    working: local, cloud: cloud, cloudUpdated: opened.state.envelope.updatedAt)
            {
                document = merged
            }
            // Only now that the recovery key opened the vault and the merge is decided: a wrong code, no network or an
            // unresolved conflict must not replace a key, or the retry would take the new key's id for the dead one's.
            let device = try replacingDeadDeviceKey()
            var state = try droppingEntries(of: store.deadDeviceKeyIDs().filter { $0 != device.kekID }, from: opened.state)
            state = try await envelopeCall { [state] in try await sealer.enroll(device, label: deviceLabel, in: state) }
            let sealed = try await envelopeCall { [document, state] in
                try await sealer.seal(encode(document), over: state, keys: [device, recoveryKey])
            }
            return .restored(
                version: try await upload(sealed, document: document, basedOn: working, precondition: .ifMatch(syncID: version)))
        }
    }

    /// Revokes an entry right after a fresh load: drops it and rotates the DEK, re-wrapping for
    /// every entry that can be wrapped without its holder (plus `additionalKeys`); reports the rest.
    ///
    /// With `newRecoveryPaths` every recovery-code and passphrase entry is replaced by those in the same save: a
    /// revoked device that ever saw the old code (or passphrase) could otherwise still open every later version.
    /// A save the server's hourly cap refuses throws `.server` with `BackupError.rateLimited`, the next allowed attempt
    /// recorded (`status().nextAttemptAt`) as a sync records it; the operation is not made later by itself.
    /// - Throws: `SyncError` `.invalidInput` for an unknown or last entry, and the others `sync` throws.
    public func revoke(
        kekID: String, additionalKeys: [any KeyWrapping] = [], newRecoveryPaths: [(key: any KeyWrapping, label: String)]? = nil
    ) async throws(SyncError) -> SyncReport {
        try await rotate(removing: [kekID], additionalKeys: additionalKeys, newRecoveryPaths: newRecoveryPaths)
    }

    /// Replaces every recovery-code and passphrase entry by `newPaths` and rotates the DEK and the vault secret, so
    /// that whoever knew an old code or passphrase opens nothing saved from now on.
    ///
    /// A save the server's hourly cap refuses throws `.server` with `BackupError.rateLimited`, the next allowed attempt
    /// recorded (`status().nextAttemptAt`) as a sync records it; the operation is not made later by itself.
    /// - Throws: `SyncError` `.invalidInput` when `newPaths` is empty (revoke a path with `revoke(kekID:)`), and the
    ///   others `sync` throws.
    public func replaceRecoveryPaths(with newPaths: [(key: any KeyWrapping, label: String)]) async throws(SyncError) -> SyncReport {
        guard !newPaths.isEmpty else { throw SyncError(.invalidInput, "give at least one new recovery path") }
        return try await rotate(removing: [], additionalKeys: [], newRecoveryPaths: newPaths)
    }

    /// Drops `kekIDs` (and, given `newRecoveryPaths`, every recovery path, then enrolls the new ones), then rotates
    /// the DEK and the vault secret in one save.
    private func rotate(
        removing kekIDs: [String], additionalKeys: [any KeyWrapping], newRecoveryPaths: [(key: any KeyWrapping, label: String)]?
    ) async throws(SyncError) -> SyncReport {
        try await exclusivelyRecordingRateLimit { () async throws(SyncError) -> SyncReport in
            _ = try await syncNow()
            let working = try readWorking()
            guard let version = store.syncRecord().syncedVersion, let document = working.document else {
                throw SyncError(.noVault, "nothing synced to revoke from")
            }
            var remaining = try await openSynced()
            // The iCloud Keychain key is no code or passphrase a revoked device saw: it is revoked by its own kek_id.
            let replaced =
                newRecoveryPaths == nil ? [] : try devices().filter { $0.isRecoveryPath && !$0.isSyncedRecoveryKey }.map(\.kekID)
            // A device's other entries go with it: a Secure Enclave phone approved again while a member holds its
            // self-ECDH entry and a pairing entry to the same key's public half, and either opens later versions.
            // Only from the entry its holder wrote: anyone can show a pairing request with another phone's public key,
            // so revoking a public-key entry must not shut out the member whose own entry holds that key.
            let revokedKeys = Set(
                remaining.entries.filter { kekIDs.contains($0.kekID) && $0.algorithm != .ecdhESA256KW }.compactMap(\.p256RecipientKey))
            let sameKeys = remaining.entries.filter {
                $0.algorithm == .ecdhESA256KW && $0.p256RecipientKey.map(revokedKeys.contains) == true
            }.map(\.kekID)
            do throws(VaultEnvelopeError) {
                for kekID in kekIDs + (sameKeys + replaced).filter({ !kekIDs.contains($0) }) {
                    remaining = try sealer.revoke(kekID: kekID, in: remaining)
                }
            } catch {
                throw SyncError(.invalidInput, error.reason)
            }
            for path in newRecoveryPaths ?? [] {
                remaining = try await envelopeCall { [remaining] in try await sealer.enroll(path.key, label: path.label, in: remaining) }
            }
            let device = try keys.deviceKeyCreatingIfNeeded()
            let wrapping = [device] + additionalKeys + (newRecoveryPaths ?? []).map(\.key) + (try syncedRecoveryWrapping())
            // allowingPrompts: this device's own key may need its holder (a Secure Enclave key); without it an iPhone's
            // rotation dropped its own entry. It is the operation's key, authenticated once for the whole operation;
            // other devices' keys are never in `wrapping`. Inside `withoutPrompts` it ends with `.notNow` instead.
            let sealed = try await envelopeCall { [remaining] in
                try await sealer.rotateDEK(
                    encode(document), over: remaining, keys: wrapping, allowingPrompts: true, rotatingVaultSecret: true)
            }
            let saved = try await upload(sealed, document: document, basedOn: working, precondition: .ifMatch(syncID: version))
            try deleteSyncedRecoveryKey(ifRevoked: kekIDs)
            return .rotated(version: saved, skipped: sealed.rotation?.skipped ?? [])
        }
    }

    /// The entries of the last synced vault, as a device list.
    ///
    /// - Throws: `SyncError` `.noVault` before a sync.
    public func devices() throws(SyncError) -> [DeviceEntry] {
        guard let blob = store.syncedBlob() else { throw SyncError(.noVault, "sync first") }
        let envelope: VaultEnvelope
        do { envelope = try VaultEnvelope(parsing: blob) } catch { throw SyncError(.tampered, error.reason) }
        let own = (try? keys.currentDeviceKey()).flatMap { $0 }.map { [$0.kekID, $0.pairingKekID] } ?? []
        let syncedKekID = heldSyncedRecoveryKekID()
        return envelope.entries.map { entry in
            let isSynced = Self.isSyncedRecoveryEntry(entry, heldKekID: syncedKekID)
            let isRecovery: Bool
            switch entry.scheme {
            case .a256kw(.recoveryCode), .a256kw(.passphrase): isRecovery = true
            default: isRecovery = isSynced
            }
            return DeviceEntry(
                kekID: entry.kekID, label: entry.label ?? "", algorithm: entry.algorithm?.rawValue ?? "seed",
                created: entry.created, isThisDevice: own.contains(entry.kekID), isRecoveryPath: isRecovery,
                isSyncedRecoveryKey: isSynced)
        }
    }

    /// Which entries this device can use, and a warning when the vault has fewer than two independent ways in.
    ///
    /// - Throws: `SyncError` `.noVault` before a sync.
    public func keyHealth() throws(SyncError) -> KeyHealth {
        let entries = try devices()
        let deviceKeys = entries.filter { !$0.isRecoveryPath }.count
        let recoveryPaths = entries.filter(\.isRecoveryPath).count
        let synced = entries.filter(\.isSyncedRecoveryKey)
        let warning: String? =
            deviceKeys + recoveryPaths < 2
            ? "only one way into this vault: losing it loses the vault; add a recovery code or another device"
            : recoveryPaths == 0
                ? "no recovery code or passphrase: if every device is lost, the vault is lost"
                : recoveryPaths == synced.count
                    ? "the only recovery path is the iCloud Keychain key: losing every device and the Apple account loses the vault; add a recovery code"
                    : nil
        let held = heldSyncedRecoveryKekID()
        return KeyHealth(
            usableHere: entries.filter { $0.isThisDevice || $0.kekID == held }.map(\.kekID), deviceKeys: deviceKeys,
            recoveryPaths: recoveryPaths, hasSyncedRecoveryKey: !synced.isEmpty, warning: warning)
    }

    // MARK: - The iCloud Keychain recovery key

    /// Turns on the iCloud Keychain recovery key (issue #28 point 5): stores a random 256-bit key in the user's iCloud
    /// Keychain and enrolls it as its own entry, right after a fresh load. A restored or new iPhone of the same Apple
    /// account then opens the vault with `recoverWithSyncedKey()`. Nothing happens when its key is already enrolled;
    /// a stored key that is not enrolled (revoked, or left by another vault) is replaced by a new one, never re-enrolled.
    ///
    /// - Throws: `SyncError` `.invalidInput` when the engine was made without a `syncedRecoveryKey`, `.notNow` or
    ///   `.localStorage` when the Keychain refuses, and what `sync` throws.
    public func enableSyncedRecoveryKey() async throws(SyncError) -> SyncReport {
        guard let syncedRecoveryKey else { throw SyncError(.invalidInput, "this engine was made without a syncedRecoveryKey store") }
        return try await exclusivelyRecordingRateLimit { () async throws(SyncError) -> SyncReport in
            try await changeRecipients { (state) async throws(SyncError) -> VaultState in
                if let held = try syncedRecoveryKey.storedKEK(), state.entries.contains(where: { $0.kekID == held.kekID }) { return state }
                let kek = try syncedRecoveryKey.createKEK()
                return try await envelopeCall { try await sealer.enroll(kek, label: SyncedRecoveryKey.label, in: state) }
            }
        }
    }

    /// Opens the server's vault with the iCloud Keychain recovery key on a restored or new iPhone of the same Apple
    /// account, enrolls this device's new key and saves, as `recover(with:)` does; the synced key's entry stays.
    /// Chosen over `sync()` using it by itself: enrolling a new Secure Enclave key shows Face ID, which the app asks for
    /// when `sync()` reported `.keyInvalidated` or `.noAccess`, and `sync()` keeps reporting exactly those.
    ///
    /// - Throws: `SyncError` `.noAccess` when this device holds no such key (not enabled, revoked, or not synced to
    ///   this device yet: iCloud Keychain may take a while on a new phone) or it does not open the vault, `.notNow`
    ///   before the first unlock, and what `recover(with:)` throws.
    public func recoverWithSyncedKey() async throws(SyncError) -> SyncReport {
        guard let kek = try syncedRecoveryKey?.storedKEK() else {
            throw SyncError(.noAccess, "no iCloud Keychain recovery key on this device (not turned on, revoked, or not synced yet)")
        }
        return try await recover(with: kek)
    }

    /// The `kek_id` of the iCloud Keychain key this device holds; nil when it holds none or cannot read it now.
    private func heldSyncedRecoveryKekID() -> String? {
        (try? syncedRecoveryKey?.storedKEK())?.kekID
    }

    /// Whether `entry` is the iCloud Keychain key's: its `kek_id` is the key held here, or (on a device without it,
    /// a laptop) it is a stored-key `A256KW` entry with the label that key is always enrolled under.
    private static func isSyncedRecoveryEntry(_ entry: WrappedKey, heldKekID: String?) -> Bool {
        if entry.kekID == heldKekID { return true }
        return entry.scheme == .a256kw(.stored) && entry.label == SyncedRecoveryKey.label
    }

    /// The iCloud Keychain key for a rotation to re-wrap (it needs no prompt); none when this device holds none.
    private func syncedRecoveryWrapping() throws(SyncError) -> [any KeyWrapping] {
        guard let kek = try syncedRecoveryKey?.storedKEK() else { return [] }
        return [kek]
    }

    /// Deletes the iCloud Keychain item, on every device of the account, once its entry was revoked and saved.
    private func deleteSyncedRecoveryKey(ifRevoked kekIDs: [String]) throws(SyncError) {
        guard let syncedRecoveryKey, let held = heldSyncedRecoveryKekID(), kekIDs.contains(held) else { return }
        try syncedRecoveryKey.delete()
    }

    // MARK: - Plumbing

    /// Runs `body` once every server operation called before it has finished; later ones wait for it.
    private func exclusively<T>(_ body: () async throws(SyncError) -> T) async throws(SyncError) -> T {
        if operationRunning {
            // Handed the turn by the finishing operation, which leaves `operationRunning` set for us.
            await withCheckedContinuation { waitingOperations.append($0) }
        } else {
            operationRunning = true
        }
        keys.operationBegan()
        defer {
            keys.operationEnded()
            if waitingOperations.isEmpty { operationRunning = false } else { waitingOperations.removeFirst().resume() }
        }
        return try await body()
    }

    /// `exclusively` for an operation whose own save may meet the server's hourly cap: the time the server allows the
    /// next save is recorded (as a sync records it) before the error is thrown on. Unlike a sync's edits, such an
    /// operation (a revoke, an approval) is not saved later by itself: it must be called again, so it is no
    /// `.rateLimited` report, which says that nothing was lost.
    private func exclusivelyRecordingRateLimit(_ body: () async throws(SyncError) -> SyncReport) async throws(SyncError) -> SyncReport {
        try await exclusively { () async throws(SyncError) -> SyncReport in
            do throws(SyncError) {
                return try await body()
            } catch {
                _ = try recordedRateLimit(error)
                throw error
            }
        }
    }

    private func readWorking() throws(SyncError) -> WorkingRead {
        WorkingRead(document: try store.workingCopy(), generation: editGeneration)
    }

    /// Loads fresh, applies `change` to the recipients, and saves over the version just loaded.
    private func changeRecipients(_ change: (VaultState) async throws(SyncError) -> VaultState) async throws(SyncError) -> SyncReport {
        _ = try await syncNow()
        let working = try readWorking()
        guard let version = store.syncRecord().syncedVersion, let document = working.document else {
            throw SyncError(.noVault, "nothing synced yet")
        }
        let state = try await change(try await openSynced())
        let sealed = try await envelopeCall { try await sealer.seal(encode(document), over: state) }
        return .pushed(version: try await upload(sealed, document: document, basedOn: working, precondition: .ifMatch(syncID: version)))
    }

    private func openSynced() async throws(SyncError) -> VaultState {
        guard let blob = store.syncedBlob() else { throw SyncError(.noVault, "nothing synced yet") }
        return try await open(blob).state
    }

    private func open(_ blob: Data, extraKeys: [any KeyEncryptionKey] = []) async throws(SyncError) -> VaultOpener.OpenedVault {
        try requireAntiRollbackState()
        guard let device = try keys.currentDeviceKey() else {
            guard !extraKeys.isEmpty else { throw SyncError(.noAccess, "this device has no key; pair it or recover") }
            return try await open(blob, keys: extraKeys)
        }
        do {
            return try await open(blob, keys: device.unwrappingKeys + extraKeys)
        } catch  where error.code == .noAccess {
            throw removal(of: [device.kekID, device.pairingKekID], in: blob) ?? error
        }
    }

    /// Refuses to read on when this profile synced but its counters and anchors are gone: what the server serves
    /// next could be any older version (FORMAT.md §11.2).
    private func requireAntiRollbackState() throws(SyncError) {
        guard store.hasLostAntiRollbackState else { return }
        throw SyncError(
            .confirmationRequired,
            "this device has synced before but its anti-rollback state (counters and anchor) is missing: "
                + "confirm it again with a member device (pair) or recover with the recovery code")
    }

    /// `.removedFromVault` when the last synced blob had an entry for one of `kekIDs` and `blob`, a later one, has none.
    private func removal(of kekIDs: [String], in blob: Data) -> SyncError? {
        guard let synced = store.syncedBlob().flatMap({ try? VaultEnvelope(parsing: $0) }),
            synced.entries.contains(where: { kekIDs.contains($0.kekID) }),
            let current = try? VaultEnvelope(parsing: blob), !current.entries.contains(where: { kekIDs.contains($0.kekID) })
        else { return nil }
        // The writer's label and time are not authenticated for a reader without the key; shown as the blob says.
        let writer = current.hint.map { " by \"\($0)\"" } ?? ""
        return SyncError(.removedFromVault, "this device's key was removed from the vault\(writer) (version saved \(current.updatedAt))")
    }

    private func openPast(_ blob: Data, checkedAgainst current: VaultIdentity?) async throws(SyncError) -> VaultOpener.OpenedVault {
        guard let device = try keys.currentDeviceKey() else { throw SyncError(.noAccess, "this device has no key; pair it or recover") }
        return try await envelopeCall {
            try await opener.openPastVersion(blob, vaultID: Self.vaultID, keys: device.unwrappingKeys, checkedAgainst: current)
        }
    }

    private func open(_ blob: Data, keys: [any KeyEncryptionKey]) async throws(SyncError) -> VaultOpener.OpenedVault {
        try await envelopeCall { try await opener.open(blob, vaultID: Self.vaultID, keys: keys) }
    }

    /// Saves a sealed vault and, once the server accepted it, records it as the new synced state.
    private func upload(
        _ sealed: VaultSealer.SealedVault, document: VaultDocument, basedOn working: WorkingRead,
        precondition: SavePrecondition
    ) async throws(SyncError) -> String {
        let version: String
        do {
            version = try await backup.save(
                sealed.blob, precondition: precondition, writer: WriterKeys(basis: sealed.basis, next: sealed.state.identity))
        } catch {
            guard precondition == .absent, Self.mayHaveBeenStored(error), let stored = await storedVersion(of: sealed.blob) else {
                throw Self.serverError("saving the vault failed", error)
            }
            version = stored
        }
        try await envelopeCall { try await sealer.markAccepted(sealed) }
        try recordSaved(document, blob: sealed.blob, version: version, basedOn: working)
        return version
    }

    /// Whether a create that failed with `error` may be on the server all the same: its answer was lost (a network
    /// error, a 5xx from a proxy after the server stored it), or a resend of it met the 409 its own first attempt
    /// caused. Only a create needs this: its secret and anchor exist nowhere else, so unless they are recorded here the
    /// vault on the server is no one's; a lost answer to any other save costs one extra merged version, no more.
    private static func mayHaveBeenStored(_ error: BackupError) -> Bool {
        switch error {
        case .conflict, .transport, .serverUnavailable: true
        default: false
        }
    }

    /// The version the server holds when it holds exactly `blob` (it stores the bytes it was sent); nil otherwise,
    /// or when that cannot be learnt now.
    private func storedVersion(of blob: Data) async -> String? {
        guard case .exactly(let version)? = try? await versionHolding(blob) else { return nil }
        return version
    }

    /// `document`, with an edit made since `working` was read replayed onto it (winning where both changed an item, as
    /// the later change); `document` itself when none was.
    private func workingCopy(over document: VaultDocument, basedOn working: WorkingRead) throws(SyncError) -> VaultDocument {
        guard working.generation != editGeneration else { return document }
        let current = try store.workingCopy() ?? document
        return ThreeWayMerge.merge(base: working.document ?? VaultDocument(), local: current, remote: document, conflictWinner: .local)
            .merged
    }

    /// Records `document` as what the server holds at `version`. The working copy becomes it, unless an edit came
    /// in since `working` was read: then that edit is replayed onto it (winning where both changed an item, as the
    /// later change) and stays pending for the next sync.
    private func recordSaved(_ document: VaultDocument, blob: Data, version: String, basedOn working: WorkingRead) throws(SyncError) {
        let newWorking = try workingCopy(over: document, basedOn: working)
        try store.commitSynced(
            document, blob: blob, working: newWorking,
            record: LocalVaultStore.SyncRecord(syncedVersion: version, hasLocalEdits: newWorking != document, nextAttemptAt: nil))
    }

    /// The failures that mean this device cannot read the vault the server holds, and so has no write key to prove
    /// membership by: an erasure then goes without a proof.
    private static let cannotRead: Set<SyncError.Code> = [
        .noVault, .noAccess, .removedFromVault, .keyInvalidated, .confirmationRequired, .confirmationMismatch, .tampered,
        .rollbackDetected, .forkDetected,
    ]

    /// The `SyncError` for a refused or failed request: `.removedFromVault` when the server wants a writer proof this
    /// device cannot give, `.tooLarge` for its 413, `.server` otherwise.
    private static func serverError(_ what: String, _ error: BackupError) -> SyncError {
        if error == .blobTooLarge {
            // The server's own limit (below this client's): as final as the client's check, and not to be retried.
            return SyncError(.tooLarge, "\(what): the vault is larger than the server takes; split large media out", backupError: error)
        }
        guard error == .writerRefused else { return SyncError(.server, what, backupError: error) }
        return SyncError(
            .removedFromVault,
            "\(what): the server takes saves and erasures of this vault only from its current members, and this device "
                + "is not a member of the stored version; pair again or recover", backupError: error)
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
            // A failure of this device's key that the envelope layer has no code for (a locked device: `.notNow`).
            if let mapped = keys.syncError(for: error) { throw mapped }
            switch error.code {
            case .rollback, .downgrade: throw SyncError(.rollbackDetected, error.reason)
            case .forkDetected: throw SyncError(.forkDetected, error.reason)
            case .recipientsAltered, .timestampAltered, .hintAltered, .counterAltered, .ciphertextAltered, .malformed, .invalidShape,
                .invalidJSON, .wrongVault, .writerNotMember, .weakParameters, .workLimitExceeded, .counterJump:
                throw SyncError(.tampered, error.reason)
            case .unconfirmedVault: throw SyncError(.confirmationRequired, error.reason)
            case .pairingMismatch: throw SyncError(.confirmationMismatch, error.reason)
            case .noMatchingKey, .unwrapFailed: throw SyncError(.noAccess, error.reason)
            case .invalidated: throw SyncError(.keyInvalidated, error.reason)
            case .userCanceled: throw SyncError(.authenticationCanceled, error.reason)
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
