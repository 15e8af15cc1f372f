/// How transient failures (network errors and 5xx) are retried: jittered exponential backoff, bounded.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The first backoff in seconds; each later one doubles, up to `maxDelaySeconds`.
    public var baseDelaySeconds: Double
    /// The longest single backoff.
    public var maxDelaySeconds: Double

    /// Creates a policy.
    public init(maxAttempts: Int = 4, baseDelaySeconds: Double = 0.25, maxDelaySeconds: Double = 8) {
        self.maxAttempts = maxAttempts
        self.baseDelaySeconds = baseDelaySeconds
        self.maxDelaySeconds = maxDelaySeconds
    }

    /// The wait before attempt `attempt + 1` ("full jitter": uniform in 0...cap), so clients
    /// that failed together do not retry together.
    public func delay(afterAttempt attempt: Int, random: Double) -> Double {
        let cap = min(maxDelaySeconds, baseDelaySeconds * Double(1 << min(attempt - 1, 30)))
        return cap * min(max(random, 0), 1)
    }
}
