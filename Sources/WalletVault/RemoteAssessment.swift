/// What a blob the server serves is, judged before opening it: newer than this device has seen, or a rollback.
public enum RemoteAssessment: Sendable, Equatable {
    /// Its counter is at or above the highest this device accepted: a sync would open it.
    case newer
    /// Its counter (nil for a seed-form blob) is below the highest this device accepted: a sync refuses it.
    case older(counter: UInt64?, highest: UInt64)
    /// It is not a vault blob a reader would open.
    case unreadable(reason: String)
}
