import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns Ctrl-C, SIGTERM and SIGHUP into an orderly stop that exits 130, so `demo` never leaves its server or files.
///
/// The order matters: `stop` ends the interrupted work (the server, the running story), the guard waits for the
/// main flow to say it no longer writes anywhere (`settled()`, bounded), and only then `cleanup` removes files —
/// removing them while a command is still running would let that command recreate the directories it writes to.
final class InterruptionGuard: @unchecked Sendable {
    private static let signals = [SIGINT, SIGTERM, SIGHUP]
    // Written once in `init`, before any signal can arrive; read by `disarm` only.
    private var sources: [any DispatchSourceSignal] = []
    private let state = Mutex((fired: false, settled: false))
    private let settledSignal = DispatchSemaphore(value: 0)

    /// Arms the guard; `stop` must make the main flow finish soon, `cleanup` runs once it has (or after 5 s).
    init(stop: @escaping @Sendable () -> Void, cleanup: @escaping @Sendable () -> Void) {
        sources = Self.signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                let first = state.withLock { state in
                    defer { state.fired = true }
                    return !state.fired
                }
                guard first else { return }
                stop()
                _ = settledSignal.wait(timeout: .now() + 5)
                cleanup()
                exit(ExitCode.interrupted.rawValue)
            }
            source.resume()
            return source
        }
    }

    /// Whether a signal arrived.
    var fired: Bool { state.withLock { $0.fired } }

    /// Tells the guard the main flow has stopped touching what `cleanup` removes.
    func settled() {
        let first = state.withLock { state in
            defer { state.settled = true }
            return !state.settled
        }
        if first { settledSignal.signal() }
    }

    /// Restores the default signal handling.
    func disarm() {
        for source in sources { source.cancel() }
        for number in Self.signals { signal(number, SIG_DFL) }
    }
}
