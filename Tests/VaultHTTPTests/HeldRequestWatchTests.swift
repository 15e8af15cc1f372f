import Foundation
import Synchronization
import Testing

@testable import VaultHTTP

/// The watch of held long-polls keeps what it must and no more (issue 30): answered requests do not leave their
/// deadlines behind, and the deadlines it keeps still fire in order.
@Suite struct HeldRequestWatchTests {
    private static let fallback = HTTPResponse(status: 304)

    @Test func requestsAnsweredBeforeTheirDeadlineLeaveNoDeadlinesBehind() {
        let watch = HeldRequestWatch()
        for _ in 0..<10_000 {
            let id = watch.makeID()
            #expect(watch.add(HeldRequest(fallback: Self.fallback, seconds: 60) { _ in }, id: id, socket: -1))
            // Answered at once, as a long-poll whose client hung up or whose user saved is.
            watch.remove(id)
        }
        #expect(watch.count == 0)
        #expect(watch.deadlinesKept <= HeldRequestWatch.compactionFloor)
    }

    @Test func theDeadlinesLeftAfterACompactionStillFireEarliestFirst() async throws {
        let watch = HeldRequestWatch()
        let fired = Mutex<[Int]>([])
        var held: [(id: UInt64, order: Int)] = []
        // Three short waits among many long ones; the long ones are answered, which compacts the heap.
        for index in 0..<300 {
            let order = index % 100 == 0 ? index / 100 : -1
            let seconds = order >= 0 ? 0.2 + Double(order) * 0.1 : 60
            let id = watch.makeID()
            let request = HeldRequest(fallback: Self.fallback, seconds: seconds) { _ in
                fired.withLock { $0.append(order) }
            }
            #expect(watch.add(request, id: id, socket: -1))
            held.append((id, order))
        }
        for entry in held where entry.order < 0 { watch.remove(entry.id) }
        #expect(watch.count == 3)
        #expect(watch.deadlinesKept <= 2 * 3 + HeldRequestWatch.compactionFloor)
        watch.start()
        defer { watch.stop() }
        let until = ContinuousClock.now + .seconds(10)
        while fired.withLock({ $0.count }) < 3, ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(20)) }
        #expect(fired.withLock { $0 } == [0, 1, 2])
    }
}
