import Dispatch
import Foundation
import Synchronization

/// Runs `body(0..<count)` on `count` threads released together, returning the results in index order.
///
/// Threads rather than tasks: store calls block, and the cooperative pool has only as many threads as cores.
public func concurrently<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
    let results = Mutex<[T?]>(Array(repeating: nil, count: count))
    let ready = DispatchGroup()
    let done = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        ready.enter()
        done.enter()
        Thread {
            ready.leave()
            start.wait()
            let result = body(index)
            results.withLock { $0[index] = result }
            done.leave()
        }.start()
    }
    ready.wait()
    for _ in 0..<count { start.signal() }
    done.wait()
    return results.withLock { $0.map { $0! } }
}
