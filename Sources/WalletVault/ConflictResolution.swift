import VaultCore

/// What the app decides when both this device and another changed the same items.
public enum ConflictResolution: Sendable, Equatable {
    /// Keep this device's vault and save it over the cloud's.
    case keepLocal
    /// Keep the cloud's vault and drop this device's edits.
    case keepCloud
    /// Keep both sides' changes; for items both changed, the later change wins.
    case merge
}

/// What the conflict handler is shown.
public struct ConflictContext: Sendable, Equatable {
    /// Items both sides changed differently.
    public let conflictingItems: [String]
    /// When this device last edited.
    public let localUpdated: UTCTimestamp
    /// The cloud vault's `updatedUtc`.
    public let cloudUpdated: UTCTimestamp
}
