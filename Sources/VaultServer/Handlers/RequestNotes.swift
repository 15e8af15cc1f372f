/// What a handler learned that belongs in the log line but never in the response.
final class RequestNotes {
    /// A short, non-reversible tag of the user (a prefix of the storage key).
    var user: String?
    /// Why the request failed, for the operator.
    var reason: String?
    /// The database failed this request.
    var storeFailed = false
}
