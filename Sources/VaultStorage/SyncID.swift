import VaultCore

/// The version stamp of a stored blob: an RFC 3339 UTC instant with milliseconds.
///
/// Sync IDs of one user strictly increase, even when two saves land in the same millisecond
/// or the server clock steps back, because each is at least one millisecond after the last.
public enum SyncID {
    /// The sync ID for a save at `now` that follows the user's previous one.
    public static func next(after previous: UTCTimestamp?, now: UTCTimestamp) -> UTCTimestamp {
        guard let previous, previous >= now else { return now }
        return UTCTimestamp(millisecondsSinceEpoch: previous.millisecondsSinceEpoch + 1)
    }
}
