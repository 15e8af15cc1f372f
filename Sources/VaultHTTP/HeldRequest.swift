import Foundation
import Synchronization

/// A request whose connection is suspended until its responder answers it (a long-poll), or the server does: at
/// its deadline, at a drain, or when its client hangs up, with the fallback the responder named.
///
/// A held request costs no worker thread: libmicrohttpd serves the connection's other work and resumes it once
/// `answer` is called, from any thread.
public final class HeldRequest: Sendable {
    private struct State {
        var answered = false
        var onAnswer: [@Sendable (HTTPResponse) -> Void] = []
    }

    /// The answer given when nothing else answers first: at the deadline, at a drain, to a client gone.
    let fallback: HTTPResponse
    /// When the fallback is given, in `DispatchTime` nanoseconds.
    let deadline: UInt64
    private let deliver: @Sendable (HTTPResponse) -> Void
    private let state = Mutex(State())

    /// A request held for up to `seconds`, whose answer goes to `deliver` (called once). `HTTPServer` makes these; a
    /// host that serves a responder without it (an in-process transport) makes its own and must itself answer the
    /// fallback when the time has passed.
    public init(fallback: HTTPResponse, seconds: Double, deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        self.fallback = fallback
        deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1_000_000_000)
        self.deliver = deliver
    }

    /// Answers the fallback, unless the request has an answer already (the host's deadline, or its client gone).
    public func answerFallback() {
        answer(fallback)
    }

    /// Answers the request with `response` unless it has an answer already, running `whenAnswered`'s listeners before
    /// the answer is delivered; returns whether this call gave it.
    @discardableResult
    public func answer(_ response: HTTPResponse) -> Bool {
        let listeners: [@Sendable (HTTPResponse) -> Void]? = state.withLock { state in
            guard !state.answered else { return nil }
            state.answered = true
            defer { state.onAnswer = [] }
            return state.onAnswer
        }
        guard let listeners else { return false }
        // Listeners first: delivering resumes the connection, and a client that polls again at once on it found the
        // slot of this long-poll still counted against its cap (a 429).
        for listener in listeners { listener(response) }
        deliver(response)
        return true
    }

    /// Calls `body` with the answer once the request has one, whoever gave it; at once if it has one already.
    public func whenAnswered(_ body: @escaping @Sendable (HTTPResponse) -> Void) {
        let alreadyAnswered = state.withLock { state in
            if !state.answered { state.onAnswer.append(body) }
            return state.answered
        }
        // The answer itself is not kept; a late listener learns only that one was given, as the fallback.
        if alreadyAnswered { body(fallback) }
    }
}
