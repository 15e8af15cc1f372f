import Dispatch
import Foundation
import Synchronization

/// A fixed set of threads for work that blocks (a save waiting on a disk flush), first come first served.
///
/// Dispatch's shared pool is sized to the CPU count and adds threads only slowly when they block, so on a
/// two-core machine no more than a few saves would ever wait on one commit together; these threads exist
/// to wait, so there are as many as saves that should be able to share a commit.
final class BlockingWorkPool: Sendable {
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    /// Signalled once per queued job and, at shutdown, once per thread: a thread that wakes to an empty
    /// queue has been told to end.
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
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    /// Lets queued jobs finish, then ends every thread and waits for them; nothing may be run after.
    func shutDown() {
        for _ in 0..<threadCount { available.signal() }
        exited.wait()
    }

    /// The oldest queued job once one is signalled; nil when woken with nothing queued, at shutdown.
    private func nextJob() -> (@Sendable () -> Void)? {
        available.wait()
        // At most one job per suspended connection is queued, so removing the first stays cheap.
        return jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
}
