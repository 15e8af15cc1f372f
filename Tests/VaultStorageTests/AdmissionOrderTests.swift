import Testing

@testable import VaultStorage

/// The admission order two caches evict by: oldest first, and compacted to near the live keys.
@Suite struct AdmissionOrderTests {
    @Test func givesKeysOldestFirstThenNothing() {
        var order = AdmissionOrder<Int>()
        for key in [3, 1, 2] { order.append(key) }
        #expect([order.takeOldest(), order.takeOldest(), order.takeOldest(), order.takeOldest()] == [3, 1, 2, nil])
    }

    @Test func compactionKeepsTheFirstPlaceOfEachLiveKeyInOrder() {
        var order = AdmissionOrder<Int>()
        // Keys 0..<10 live, each admitted again 300 times after being forgotten: 3 010 places for 10 keys.
        for key in 0..<10 { order.append(key) }
        for _ in 0..<300 { for key in (0..<10).reversed() { order.append(key) } }
        order.append(99)  // not live
        order.compact(liveCount: 10) { $0 < 10 }
        var left: [Int] = []
        while let key = order.takeOldest() { left.append(key) }
        #expect(left == Array(0..<10))
    }

    @Test func belowTheBoundCompactionChangesNothing() {
        var order = AdmissionOrder<Int>()
        for key in [1, 1, 2] { order.append(key) }
        order.compact(liveCount: 2) { _ in true }
        var left: [Int] = []
        while let key = order.takeOldest() { left.append(key) }
        #expect(left == [1, 1, 2])
    }
}
