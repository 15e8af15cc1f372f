import Foundation
import Synchronization
import Testing
import VaultTestSupport

@testable import VaultServer

@Suite("Heap trimming")
struct HeapTrimmerTests {
    @Test func trimsOnItsScheduleUntilStopped() async throws {
        let calls = Counter()
        let trimmer = HeapTrimmer(intervalSeconds: 0.05) { calls.increment() }
        let trimmedThrice = try await eventually(timeout: .seconds(10)) { calls.value >= 3 }
        trimmer.stop()
        let seen = calls.value
        #expect(trimmedThrice && seen >= 3, "trimmed \(seen) times in 10 s")
        // That no trim follows the stop can only be watched for a while: four intervals, so a timer still running
        // would have fired even on a loaded machine.
        try await Task.sleep(for: .milliseconds(200))
        #expect(calls.value == seen)
    }
}

private final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}

#if canImport(Glibc)
    @Suite("Heap trimming, with glibc")
    struct GlibcHeapTrimTests {
        /// The soak's finding in miniature: free blocks pinned between live ones stay resident until trimmed.
        @Test func returnsPinnedFreePagesToTheSystem() async throws {
            // On a thread of its own, so that its allocations come from that thread's malloc arena.
            let (before, after) = try await onOwnThread {
                // One thread's arena: 64 MiB of 4 KiB blocks, every 16th kept, the rest freed.
                let blocks = (0..<16_384).map { _ in malloc(4096)! }
                for block in blocks { memset(block, 0xA5, 4096) }
                var kept: [UnsafeMutableRawPointer] = []
                for (index, block) in blocks.enumerated() {
                    if index % 16 == 0 { kept.append(block) } else { free(block) }
                }
                let before = residentBytes()
                HeapTrimmer.returnFreePages()
                let after = residentBytes()
                for block in kept { free(block) }
                return (before, after)
            }
            // About 60 MiB were free inside the arena; most of it must leave the resident set.
            #expect(before - after > 40 << 20, "resident \(before >> 20) MiB before the trim, \(after >> 20) MiB after")
        }
    }

    private func residentBytes() -> Int {
        let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

#endif
