import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a cleanup on Ctrl-C, SIGTERM or SIGHUP, then exits 130, so `demo` never leaves its server behind.
final class InterruptionGuard: @unchecked Sendable {
    private static let signals = [SIGINT, SIGTERM, SIGHUP]
    private let sources: [any DispatchSourceSignal]

    /// Arms the guard.
    init(cleanup: @escaping @Sendable () -> Void) {
        sources = Self.signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                cleanup()
                exit(ExitCode.interrupted.rawValue)
            }
            source.resume()
            return source
        }
    }

    /// Restores the default signal handling.
    func disarm() {
        for source in sources { source.cancel() }
        for number in Self.signals { signal(number, SIG_DFL) }
    }
}
