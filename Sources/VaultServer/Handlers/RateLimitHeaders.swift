import VaultStorage

/// How a save's rate-limit decision is told to the client (draft-ietf-httpapi-ratelimit-headers).
///
/// The storage layer decides; only the API knows the decision travels in headers.
extension SlidingWindowRateLimit {
    /// The `RateLimit-Policy` header value.
    var policyHeader: String {
        "\"saves\";q=\(limit);w=\(windowMilliseconds / 1000)"
    }

    /// The `RateLimit` header value for a decision.
    func stateHeader(for decision: Decision) -> String {
        switch decision {
        case .allowed(let remaining): "\"saves\";r=\(max(0, remaining))"
        case .limited(let retryAfter): "\"saves\";r=0;t=\(retryAfter)"
        }
    }
}
