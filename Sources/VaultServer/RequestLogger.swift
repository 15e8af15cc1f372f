import Foundation
import Synchronization

/// Writes one JSON line per request, to stderr unless told otherwise: never a token, a secret or blob bytes.
public final class RequestLogger: Sendable {
    /// One request's log record.
    public struct Record: Encodable, Sendable {
        let time: String
        let method: String
        let route: String
        let status: Int
        let durationMs: Double
        let bytesIn: Int
        let bytesOut: Int
        let client: String?
        let user: String?
        let reason: String?

        enum CodingKeys: String, CodingKey {
            case time, method, route, status, client, user, reason
            case durationMs = "duration_ms"
            case bytesIn = "bytes_in"
            case bytesOut = "bytes_out"
        }
    }

    /// Whether request records are written; operator messages always are.
    public let enabled: Bool
    private let lock = Mutex(())
    private let sink: @Sendable (Data) -> Void

    /// Creates a logger; a disabled one drops every record. Each line goes to `sink`, one call at a time.
    public init(enabled: Bool, sink: @escaping @Sendable (Data) -> Void = { FileHandle.standardError.write($0) }) {
        self.enabled = enabled
        self.sink = sink
    }

    /// Writes a record as one line.
    public func write(_ record: Record) {
        guard enabled else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(record) else { return }
        line.append(0x0A)
        lock.withLock { _ in sink(line) }
    }

    /// Writes a free-form operator message (startup, warnings) as one JSON line.
    public func message(_ text: String, level: String = "info") {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(["level": level, "message": text]) else { return }
        line.append(0x0A)
        lock.withLock { _ in sink(line) }
    }
}
