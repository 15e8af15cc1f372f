import Dispatch
import Foundation
import Synchronization

/// A fixed set of threads for work that blocks (a save waiting on a disk flush), first come first served.
///
/// Dispatch's shared pool is sized to the CPU count and adds threads only slowly when they block, so on a
/// two-core machine no more than a few saves would ever wait on one commit together; these threads exist
/// to wait, so there are as many as saves that should be able to share a commit.
final class BlockingWorkPool: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var next = 0
        var stopping = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let threadCount: Int
    private let exited = DispatchGroup()

    /// Starts `threads` threads named after `name`.
    init(threads: Int, name: String) {
        threadCount = threads
        for index in 0..<threads {
            exited.enter()
            let thread = Thread { [self] in
                while let job = nextJob() { job() }
                exited.leave()
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Runs `job` on the next free thread.
    func run(_ job: @escaping @Sendable () -> Void) {
        state.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// Lets queued jobs finish, then ends every thread and waits for them.
    func shutDown() {
        state.withLock { $0.stopping = true }
        for _ in 0..<threadCount { available.signal() }
        exited.wait()
    }

    /// The oldest queued job, waiting for one; nil once shutting down with nothing queued.
    private func nextJob() -> (@Sendable () -> Void)? {
        while true {
            available.wait()
            let job = state.withLock { state -> (@Sendable () -> Void)?? in
                if state.next < state.jobs.count {
                    let job = state.jobs[state.next]
                    state.next += 1
                    // Compact once the consumed prefix dominates, so the array does not grow forever.
                    if state.next > 64 && state.next * 2 > state.jobs.count {
                        state.jobs.removeFirst(state.next)
                        state.next = 0
                    }
                    return .some(job)
                }
                return state.stopping ? .some(nil) : nil
            }
            if let job { return job }
        }
    }
}
