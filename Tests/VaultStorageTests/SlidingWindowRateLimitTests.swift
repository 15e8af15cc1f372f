import Testing
import VaultCore
import VaultStorage

@Suite struct SlidingWindowRateLimitTests {
    let policy = SlidingWindowRateLimit(limit: 3, windowSeconds: 3600)

    @Test func allowsUpToTheLimitThenTellsWhenToRetry() {
        let start: Int64 = 1_000_000
        var accepted: [Int64] = []
        for step in 0..<3 {
            let now = UTCTimestamp(millisecondsSinceEpoch: start + Int64(step) * 1000)
            #expect(policy.decide(acceptedSaves: accepted, now: now) == .allowed(remaining: 2 - step))
            accepted.append(now.millisecondsSinceEpoch)
        }
        let now = UTCTimestamp(millisecondsSinceEpoch: start + 10_000)
        #expect(policy.decide(acceptedSaves: accepted, now: now) == .limited(retryAfterSeconds: 3590))
        // The window slides: once the oldest save is an hour old, one slot frees.
        let later = UTCTimestamp(millisecondsSinceEpoch: start + 3_600_000 + 1)
        #expect(policy.decide(acceptedSaves: accepted, now: later) == .allowed(remaining: 0))
    }
}
