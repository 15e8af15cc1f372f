import Testing
import VaultStorage

@testable import VaultServer

/// A save's rate-limit decision as the client reads it (draft-ietf-httpapi-ratelimit-headers).
@Suite struct RateLimitHeadersTests {
    let policy = SlidingWindowRateLimit(limit: 3, windowSeconds: 3600)

    @Test func headers() {
        #expect(policy.policyHeader == "\"saves\";q=3;w=3600")
        #expect(policy.stateHeader(for: .limited(retryAfterSeconds: 7)) == "\"saves\";r=0;t=7")
    }
}
