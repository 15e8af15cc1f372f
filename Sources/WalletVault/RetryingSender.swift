import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends a request, retrying network failures and 5xx answers by a `RetryPolicy`; 4xx answers return at once.
struct RetryingSender: Sendable {
    let transport: any HTTPTransport
    let policy: RetryPolicy
    let clock: any WalletClock

    /// The first answer that is not a 5xx, or the error once the attempts run out.
    func send(_ request: URLRequest) async throws(BackupError) -> (Data, HTTPURLResponse) {
        var attempt = 0
        while true {
            attempt += 1
            let failure: BackupError
            do {
                try Task.checkCancellation()
                let (data, response) = try await transport.send(request)
                guard response.statusCode >= 500 else { return (data, response) }
                failure = .serverUnavailable(status: response.statusCode)
            } catch is CancellationError {
                throw .transport("cancelled")
            } catch {
                failure = .transport((error as? URLError).map { "URLError \($0.code.rawValue)" } ?? "\(type(of: error))")
            }
            guard attempt < policy.maxAttempts else { throw failure }
            do {
                try await clock.sleep(seconds: policy.delay(afterAttempt: attempt, random: Double.random(in: 0...1)))
            } catch {
                throw .transport("cancelled")
            }
        }
    }
}
