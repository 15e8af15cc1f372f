import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Holds the next request (or call) it is armed for until the test releases it, and tells the test when it arrived.
///
/// One-shot: once it has held a request, later ones pass straight through until it is armed again, so a retried
/// round does not hang.
public final class RequestGate: Sendable {
    /// Which request (or call, for nil) the gate holds.
    public typealias Matcher = @Sendable (URLRequest?) -> Bool

    private struct State {
        var matcher: Matcher?
        var arrived = false
        var arrivalWaiters: [CheckedContinuation<Void, Never>] = []
        var held: CheckedContinuation<Void, Never>?
        var seen = 0
    }

    private let state = Mutex(State())

    /// A gate armed for nothing.
    public init() {}

    /// Holds the next request with this method and `action`.
    public func arm(method: String, action: String) {
        arm { request in
            guard let request, request.httpMethod == method, request.url?.path.hasSuffix("wallet-backup.ashx") == true else { return false }
            return URLComponents(url: request.url!, resolvingAgainstBaseURL: false)?.queryItems?
                .contains { $0.name == "action" && $0.value == action } == true
        }
    }

    /// Holds the next caller of `pass()` (or request) that `matcher` accepts; for a conflict handler, accept all.
    public func arm(_ matcher: @escaping Matcher = { _ in true }) {
        state.withLock { state in
            state.matcher = matcher
            state.arrived = false
        }
    }

    /// Called by the transport and by test handlers: waits for `release()` when the gate is armed for `request`.
    public func pass(_ request: URLRequest? = nil) async {
        let matched = state.withLock { state in
            state.seen += 1
            return state.matcher?(request) == true
        }
        guard matched else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (hold, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                // Checked again under the lock: two callers may both have matched above.
                guard let matcher = state.matcher, matcher(request) else { return (false, []) }
                state.matcher = nil
                state.arrived = true
                state.held = continuation
                defer { state.arrivalWaiters = [] }
                return (true, state.arrivalWaiters)
            }
            for waiter in waiters { waiter.resume() }
            if !hold { continuation.resume() }
        }
    }

    /// Returns once the armed request is held here.
    public func arrival() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = state.withLock { state in
                if !state.arrived { state.arrivalWaiters.append(continuation) }
                return state.arrived
            }
            if already { continuation.resume() }
        }
    }

    /// How many requests (or calls) have come through, held or not.
    public var seen: Int { state.withLock { $0.seen } }

    /// Lets the held request go on.
    public func release() {
        let held = state.withLock { state in
            defer { state.held = nil }
            return state.held
        }
        held?.resume()
    }
}
