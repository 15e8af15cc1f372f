import CVaultShims
import Foundation
import Synchronization

/// The requests held open and their deadlines; one thread gives each its fallback when its deadline passes or its
/// client hangs up (libmicrohttpd polls no suspended socket, so it would not notice), and `releaseAll` gives every
/// one its fallback at once, at a drain.
final class HeldRequestWatch: @unchecked Sendable {
    // @unchecked: `thread` is touched only by start/stop, which are not concurrent; everything else is under `state`.
    private struct Entry {
        let request: HeldRequest
        let socket: Int32
    }
    private struct State {
        var entries: [UInt64: Entry] = [:]
        /// Deadlines as a binary min-heap; entries already answered are dropped as they come up, or all at once when
        /// they outnumber the held ones (`remove`).
        var deadlines: [(deadline: UInt64, id: UInt64)] = []
        /// Set by `releaseAll`: what arrives later is answered at once.
        var released = false
    }

    private let state = Mutex(State())
    private let watchDescriptor: Int32
    private let wakeDescriptor: Int32
    private let stopping = Atomic<Bool>(false)
    /// The last id handed out; 0 is the wake descriptor's.
    private let lastID = Atomic<UInt64>(0)
    private let stopped = DispatchSemaphore(value: 0)
    private var thread: Thread?

    /// Whether the epoll set and wake descriptor could be made (no descriptor left, otherwise).
    var canWatch: Bool { watchDescriptor >= 0 && wakeDescriptor >= 0 }

    /// The requests held now.
    var count: Int { state.withLock { $0.entries.count } }

    /// The deadlines kept, held requests' and answered ones' not yet dropped; at most about twice `count`.
    var deadlinesKept: Int { state.withLock { $0.deadlines.count } }

    init() {
        var wake: Int32 = -1
        watchDescriptor = wv_hangup_watch_create(&wake)
        wakeDescriptor = wake
    }

    deinit {
        if watchDescriptor >= 0 { close(watchDescriptor) }
        if wakeDescriptor >= 0 { close(wakeDescriptor) }
    }

    func start() {
        guard thread == nil else { return }
        stopping.store(false, ordering: .relaxed)
        state.withLock { $0.released = false }
        let thread = Thread { [self] in
            run()
            stopped.signal()
        }
        thread.name = "walletvault-held-requests"
        self.thread = thread
        thread.start()
    }

    /// Gives every held request its fallback, then ends the thread.
    func stop() {
        releaseAll()
        guard thread != nil else { return }
        stopping.store(true, ordering: .relaxed)
        wv_hangup_watch_wake(wakeDescriptor)
        stopped.wait()
        thread = nil
    }

    /// A new id for a held request, never 0.
    func makeID() -> UInt64 { lastID.wrappingAdd(1, ordering: .relaxed).newValue }

    /// Watches `request`, named `id`, on `socket`; returns false once released (the caller then answers the fallback).
    func add(_ request: HeldRequest, id: UInt64, socket: Int32) -> Bool {
        let (added, earliest) = state.withLock { state -> (Bool, Bool) in
            guard !state.released else { return (false, false) }
            state.entries[id] = Entry(request: request, socket: socket)
            Self.push(&state.deadlines, (request.deadline, id))
            // Watched under the lock, so `remove` (which takes it) cannot run between entry and watch.
            if socket >= 0 { _ = wv_hangup_watch_add(watchDescriptor, socket, id) }
            return (true, state.deadlines.first?.id == id)
        }
        // The thread sleeps until the earliest deadline it knew; a new earliest one must wake it.
        if earliest { wv_hangup_watch_wake(wakeDescriptor) }
        return added
    }

    /// Forgets `id`; called before its connection resumes, while the socket is still the connection's.
    func remove(_ id: UInt64) {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: id) else { return }
            if entry.socket >= 0 { wv_hangup_watch_remove(watchDescriptor, entry.socket) }
            // Answered requests' deadlines would otherwise stay until they pass (up to the longest wait): a client
            // that opens long-polls and hangs up at once would grow the heap by one per request for that long.
            if state.deadlines.count > Self.compactionFloor && state.deadlines.count > 2 * state.entries.count {
                // Sorted by deadline is a valid min-heap; the rebuild runs once per `count` removals at most.
                state.deadlines = state.entries.map { (deadline: $0.value.request.deadline, id: $0.key) }
                    .sorted { $0.deadline < $1.deadline }
            }
        }
    }

    /// Below this many deadlines the heap is left to drop answered ones as they come up.
    static let compactionFloor = 64

    /// Gives every held request its fallback now, and every later one at once.
    func releaseAll() {
        let held = state.withLock { state -> [HeldRequest] in
            state.released = true
            return state.entries.values.map(\.request)
        }
        for request in held { request.answerFallback() }
    }

    private func run() {
        var ids = [UInt64](repeating: 0, count: 256)
        while !stopping.load(ordering: .relaxed) {
            let ready = ids.withUnsafeMutableBufferPointer { buffer in
                wv_hangup_watch_wait(watchDescriptor, wakeDescriptor, buffer.baseAddress, Int32(buffer.count), nextTimeoutMilliseconds())
            }
            if ready > 0 {
                let gone = state.withLock { state in ids.prefix(Int(ready)).compactMap { state.entries[$0]?.request } }
                for request in gone { request.answerFallback() }
            }
            for request in takeExpired() { request.answerFallback() }
        }
    }

    /// Milliseconds until the earliest deadline, rounded up; -1 when nothing is held.
    private func nextTimeoutMilliseconds() -> Int32 {
        let now = DispatchTime.now().uptimeNanoseconds
        return state.withLock { state in
            guard let earliest = state.deadlines.first?.deadline else { return -1 }
            guard earliest > now else { return 0 }
            return Int32(min((earliest - now + 999_999) / 1_000_000, 60_000))
        }
    }

    private func takeExpired() -> [HeldRequest] {
        let now = DispatchTime.now().uptimeNanoseconds
        return state.withLock { state in
            var expired: [HeldRequest] = []
            while let top = state.deadlines.first, top.deadline <= now {
                Self.popFirst(&state.deadlines)
                if let entry = state.entries[top.id] { expired.append(entry.request) }
            }
            return expired
        }
    }

    private static func push(_ heap: inout [(deadline: UInt64, id: UInt64)], _ item: (UInt64, UInt64)) {
        heap.append(item)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func popFirst(_ heap: inout [(deadline: UInt64, id: UInt64)]) {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
