import VaultCore
import VaultEnvelope

/// What one sync round (or one device operation) did.
public enum SyncReport: Sendable, Equatable {
    /// Nothing to do; this device and the server agree.
    case upToDate(version: String)
    /// The vault was created on the server.
    case created(version: String)
    /// Local edits were saved; or this device's own key entry was, after the save enrolling it at a restore had failed.
    case pushed(version: String)
    /// The server's newer vault replaced the local copy (nothing local was lost).
    case restored(version: String)
    /// Both sides' edits were merged and saved; `conflicts` lists items a conflict decision settled.
    case merged(version: String, conflicts: [String])
    /// The server's hourly cap was hit: nothing was lost, the local copy stays authoritative, and the
    /// next attempt is allowed at `nextAttempt`. Another device's save found meanwhile was merged under the local edits
    /// (the conflict handler asked as a merge asks), to be saved with them then.
    case rateLimited(nextAttempt: UTCTimestamp)
    /// The vault was saved with a new DEK; `skipped` lists entries that could not be re-wrapped.
    case rotated(version: String, skipped: [DEKRotation.Skipped])
    /// The content of the kept version `restoredFrom` was saved again as the new current version.
    case restoredVersion(restoredFrom: String, version: String)

    /// The server version after this operation, if it has one.
    public var version: String? {
        switch self {
        case .upToDate(let version), .created(let version), .pushed(let version), .restored(let version),
            .merged(let version, _), .rotated(let version, _), .restoredVersion(_, let version):
            version
        case .rateLimited:
            nil
        }
    }
}
