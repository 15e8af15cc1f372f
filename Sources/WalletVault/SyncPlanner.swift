import VaultCore

/// Decides what one sync round does, from what this device last synced and what the server holds.
///
/// The rule that matters: content newer than what this device has seen is never overwritten
/// silently. Saves carry `If-Match` of the version they were based on, so a racing device turns
/// a would-be overwrite into a 409 that comes back here as `remoteChanged`.
public struct SyncPlanner: Sendable {
    /// How to treat edits on both sides.
    public enum Policy: Sendable, Equatable {
        /// Merge item by item; ask only when both sides changed the same item differently (default).
        case threeWayMerge
        /// The seed's §6 rule: the newer `updatedUtc` wins silently unless the two differ by more
        /// than `promptThresholdSeconds`; only then ask. Two edits within a minute lose one silently.
        case seedTimestamps(promptThresholdSeconds: Int64)
    }

    /// What this device knows.
    public struct LocalState: Sendable, Equatable {
        /// The server version last synced, nil if never.
        public var syncedVersion: String?
        /// Whether the vault was edited here since that sync.
        public var hasLocalEdits: Bool
        /// Whether a vault exists on this device at all.
        public var hasVault: Bool

        /// Creates a local state.
        public init(syncedVersion: String?, hasLocalEdits: Bool, hasVault: Bool) {
            self.syncedVersion = syncedVersion
            self.hasLocalEdits = hasLocalEdits
            self.hasVault = hasVault
        }
    }

    /// What the server holds.
    public enum RemoteState: Sendable, Equatable {
        /// Nothing stored.
        case empty
        /// The version this device last synced is still current.
        case unchanged
        /// Another version is current.
        case changed(version: String)
    }

    /// The step to take.
    public enum Step: Sendable, Equatable {
        /// Nothing to do.
        case upToDate
        /// Store the local vault where nothing is stored yet (`If-None-Match: *`).
        case createRemote
        /// Upload local edits over the version they were based on (`If-Match`).
        case push(basedOn: String)
        /// Replace the local vault with the server's silently: nothing local would be lost.
        case restore(version: String)
        /// Both sides changed: merge against the last synced copy, then push over `version`.
        case merge(remoteVersion: String)
    }

    /// The policy for edits on both sides.
    public let policy: Policy

    /// Creates a planner.
    public init(policy: Policy = .threeWayMerge) {
        self.policy = policy
    }

    /// The next step for these states.
    public func plan(local: LocalState, remote: RemoteState) -> Step {
        switch remote {
        case .empty:
            return local.hasVault ? .createRemote : .upToDate
        case .unchanged:
            guard let synced = local.syncedVersion else { return .upToDate }
            return local.hasLocalEdits ? .push(basedOn: synced) : .upToDate
        case .changed(let version):
            guard local.hasVault else { return .restore(version: version) }
            return local.hasLocalEdits || local.syncedVersion == nil ? .merge(remoteVersion: version) : .restore(version: version)
        }
    }

    /// How a `.merge` step resolves, given the merge result and both sides' `updatedUtc`.
    public enum MergeDecision: Sendable, Equatable {
        /// Push the merged document: no item conflicts (or the seed rule picked a side silently).
        case pushMerged
        /// Keep the server's document, dropping local edits (the seed rule, server newer).
        case takeRemote
        /// Push the local document over the server's (the seed rule, local newer).
        case takeLocal
        /// Ask the app: keep this device's, keep the cloud's, or merge.
        case ask(conflictingItems: [String])
    }

    /// Decides how to finish a merge step.
    public func resolve(merge: ThreeWayMerge.Result, localUpdated: UTCTimestamp, remoteUpdated: UTCTimestamp) -> MergeDecision {
        switch policy {
        case .threeWayMerge:
            return merge.conflicts.isEmpty ? .pushMerged : .ask(conflictingItems: merge.conflicts)
        case .seedTimestamps(let threshold):
            let difference = abs(localUpdated.millisecondsSinceEpoch - remoteUpdated.millisecondsSinceEpoch)
            guard difference <= threshold * 1000 else { return .ask(conflictingItems: merge.conflicts) }
            return remoteUpdated > localUpdated ? .takeRemote : .takeLocal
        }
    }
}
