import Foundation
import Synchronization
import Testing
@testable import VaultServer

@Suite("Heap trimming")
struct HeapTrimmerTests {
    @Test func trimsOnItsScheduleUntilStopped() async throws {
        let calls = Counter()
        let trimmer = HeapTrimmer(intervalSeconds: 0.05) { calls.increment() }
        let deadline = ContinuousClock.now + .seconds(10)
        while calls.value < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        trimmer.stop()
        let seen = calls.value
        #expect(seen >= 3)
        try await Task.sleep(for: .milliseconds(200))
        #expect(calls.value == seen)
    }
}

private final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}
