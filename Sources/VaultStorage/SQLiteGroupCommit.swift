import Dispatch
import Synchronization
import VaultCore

/// Commits concurrent saves together: one transaction, one fsync, each save inside its own savepoint.
///
/// A synchronous commit costs one disk flush whatever it holds, so saves that arrive while a flush
/// runs wait and share the next one. Each save still sees the ones before it in the batch (same
/// connection), so compare-and-swap and the rate limit decide exactly as one at a time; no save is
/// acknowledged before the commit holding it is on disk, and a failed commit fails every save in it.
final class SQLiteGroupCommit<Request: Sendable>: Sendable {
    private final class Pending: @unchecked Sendable {
        // @unchecked: `result` and `leads` are written before `signal` and read after `wait`.
        let request: Request
        var result: Result<SaveOutcome, StoreError>?
        var leads = false
        let woken = DispatchSemaphore(value: 0)

        init(_ request: Request) {
            self.request = request
        }
    }

    private struct Queue {
        var pending: [Pending] = []
        var leaderActive = false
    }

    private let queue = Mutex(Queue())
    private let commit: @Sendable ([Request]) -> [Result<SaveOutcome, StoreError>]

    /// Creates a group commit over `commit`, which runs a batch in one transaction and returns one result per save.
    init(commit: @escaping @Sendable ([Request]) -> [Result<SaveOutcome, StoreError>]) {
        self.commit = commit
    }

    /// Saves `request` in the next batch and returns its outcome once that batch is durable.
    ///
    /// `whileQueued` runs on the caller's thread once the request is queued, before it waits or leads: work the
    /// batch's commit needs done (a body file's sync) that can overlap the commit running ahead of it.
    func save(_ request: Request, whileQueued: () -> Void = {}) throws(StoreError) -> SaveOutcome {
        let mine = Pending(request)
        let leads = queue.withLock { queue -> Bool in
            queue.pending.append(mine)
            guard !queue.leaderActive else { return false }
            queue.leaderActive = true
            return true
        }
        whileQueued()
        if !leads {
            mine.woken.wait()
            if let result = mine.result { return try result.get() }
        }
        // Leading: commit everything waiting (this save included), then hand the lead to the next arrival.
        let batch = queue.withLock { queue -> [Pending] in
            defer { queue.pending.removeAll(keepingCapacity: true) }
            return queue.pending
        }
        for (pending, result) in zip(batch, commit(batch.map(\.request))) { pending.result = result }
        queue.withLock { queue in
            if let next = queue.pending.first {
                next.leads = true
                next.woken.signal()
            } else {
                queue.leaderActive = false
            }
        }
        for pending in batch where pending !== mine { pending.woken.signal() }
        guard let result = mine.result else { throw StoreError(.corrupt, "a save was left out of its batch") }
        return try result.get()
    }
}
