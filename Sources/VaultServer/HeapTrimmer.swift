import CVaultShims
import Dispatch

/// Hands the allocator's free pages back to the system every so often.
///
/// libmicrohttpd gives each connection a 16 KiB pool from the malloc arena of the worker thread that accepted it,
/// and the same workers allocate request bodies that the blob cache keeps. After a burst of connections closes,
/// their pools are free but pinned between live bodies, so glibc can neither reuse all of them nor shrink its
/// heaps: the soak saw resident memory stay about 3 MiB up after 500 slow connections had gone, and a single
/// `malloc_trim(0)` took it back down 4.6 MiB. glibc never trims inside its heaps on its own.
final class HeapTrimmer: Sendable {
    /// Dispatch sources are thread-safe; the Dispatch overlay just does not mark them Sendable.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer

    /// Starts trimming every `intervalSeconds` with `trim` (glibc's `malloc_trim(0)` by default).
    init(intervalSeconds: Double, trim: @escaping @Sendable () -> Void = HeapTrimmer.returnFreePages) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "walletvault.heap-trim", qos: .utility))
        timer.schedule(
            deadline: .now() + intervalSeconds, repeating: intervalSeconds,
            leeway: .milliseconds(Int(intervalSeconds * 100)))
        timer.setEventHandler(handler: trim)
        timer.resume()
    }

    /// Stops the timer; a trim already running finishes.
    func stop() {
        timer.cancel()
    }

    /// Releases every whole free page in every malloc arena; does nothing where the allocator is not glibc's.
    static let returnFreePages: @Sendable () -> Void = { _ = wv_heap_trim() }
}
