import Testing
import VaultCore
import VaultStorage

@Suite struct SyncIDTests {
    @Test func strictlyIncreasesWithinOneMillisecondAndAcrossClockSteps() {
        let now = UTCTimestamp(millisecondsSinceEpoch: 1000)
        let first = SyncID.next(after: nil, now: now)
        let second = SyncID.next(after: first, now: now)
        let third = SyncID.next(after: second, now: UTCTimestamp(millisecondsSinceEpoch: 10))
        #expect(first < second && second < third)
        #expect(SyncID.next(after: third, now: UTCTimestamp(millisecondsSinceEpoch: 5000)).millisecondsSinceEpoch == 5000)
    }
}
