/// What a responder does with a request it may hold open (`HTTPResponder.hold`).
public enum HTTPHoldDecision: Sendable {
    /// Answer now.
    case answer(HTTPResponse)
    /// Suspend the connection for up to `seconds`, then answer `fallback` unless the responder answered first; `begin`
    /// is called with the held request once it is suspended (it may answer at once).
    case hold(seconds: Double, fallback: HTTPResponse, begin: @Sendable (HeldRequest) -> Void)
}
