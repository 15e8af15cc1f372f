import Foundation
import Synchronization
import Testing

@testable import VaultHTTP

/// A held request's answer: given once, and only after what waits on it (the long-poll caps' slot) has run.
@Suite struct HeldRequestTests {
    /// The listeners run before the answer is delivered: the delivery resumes the connection, and a client that polls
    /// again at once on it was refused with a 429 while the slot of the long-poll just answered was still counted.
    @Test func whatWaitsOnTheAnswerRunsBeforeTheClientGetsIt() {
        let released = Atomic<Bool>(false)
        let releasedAtDelivery = Mutex<[Bool]>([])
        let request = HeldRequest(fallback: HTTPResponse(status: 304), seconds: 60) { _ in
            releasedAtDelivery.withLock { $0.append(released.load(ordering: .acquiring)) }
        }
        request.whenAnswered { _ in released.store(true, ordering: .releasing) }
        #expect(request.answer(HTTPResponse(status: 200)))
        #expect(!request.answer(HTTPResponse(status: 200)), "a second answer is refused")
        request.answerFallback()
        #expect(releasedAtDelivery.withLock { $0 } == [true])
    }
}
