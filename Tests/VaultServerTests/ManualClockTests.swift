import Foundation
import Testing
import VaultCore
import VaultServer
import VaultTestSupport

/// The in-process server's clock: by default it follows the wall clock, so that an OIDC token a test signs for the
/// present is never "issued in the future" to a server created long before on a loaded machine. Frozen at creation,
/// it refused them once that passed the minute D1 allows: 76–78 SDK tests failed with 401 in parallel runs beside
/// other builds.
@Suite struct ManualClockTests {
    @Test func theDefaultClockFollowsTheWallClockPlusWhatWasAdded() async throws {
        let clock = ManualClock()
        let wall = SystemClock().now().millisecondsSinceEpoch
        #expect(abs(clock.now().millisecondsSinceEpoch - wall) < 1000)
        try await Task.sleep(for: .milliseconds(50))
        #expect(clock.now().millisecondsSinceEpoch - wall >= 50, "the clock stood still")
        clock.advance(seconds: 3600)
        #expect(clock.now().millisecondsSinceEpoch - SystemClock().now().millisecondsSinceEpoch > 3_599_000)
    }

    @Test func aClockGivenAStartReadsItUntilMoved() async throws {
        let start = UTCTimestamp(millisecondsSinceEpoch: 1_790_000_000_000)
        let clock = ManualClock(start: start)
        try await Task.sleep(for: .milliseconds(20))
        #expect(clock.now() == start)
        clock.advance(seconds: 1.5)
        #expect(clock.now().millisecondsSinceEpoch == start.millisecondsSinceEpoch + 1500)
    }
}
