import Foundation
import Synchronization
import VaultWire

/// Counters and histograms for `GET /metrics`, in the Prometheus text format (version 0.0.4).
public final class ServerMetrics: Sendable {
    /// Upper bounds of the latency histogram's buckets, in seconds.
    static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct Counts {
        var requests: [RouteStatus: Int] = [:]
        var latencyBuckets = [Int](repeating: 0, count: ServerMetrics.latencyBuckets.count)
        var latencyCount = 0
        var latencySum = 0.0
        var requestBytes = 0
        var responseBytes = 0
        var rateLimitedSaves = 0
        var conflicts = 0
        var storeErrors = 0
    }

    private struct RouteStatus: Hashable {
        let route: String
        let status: Int
    }

    private let counts = Mutex(Counts())
    private let connections = Atomic<Int>(0)
    private let longPolls = Atomic<Int>(0)
    private let longPollsRefused = Atomic<Int>(0)
    private let longPollCaps = Mutex((perUser: 0, total: 0))

    /// Creates empty metrics.
    public init() {}

    /// Records one answered request.
    func record(route: String, status: Int, seconds: Double, requestBytes: Int, responseBytes: Int, storeFailed: Bool) {
        counts.withLock { counts in
            counts.requests[RouteStatus(route: route, status: status), default: 0] += 1
            if let bucket = Self.latencyBuckets.firstIndex(where: { seconds <= $0 }) { counts.latencyBuckets[bucket] += 1 }
            counts.latencyCount += 1
            counts.latencySum += seconds
            counts.requestBytes += requestBytes
            counts.responseBytes += responseBytes
            if route == WirePath.backup && status == 429 { counts.rateLimitedSaves += 1 }
            if status == 409 { counts.conflicts += 1 }
            if storeFailed { counts.storeErrors += 1 }
        }
    }

    /// Notes a connection opening (`true`) or closing (`false`).
    func connectionChanged(opened: Bool) {
        connections.wrappingAdd(opened ? 1 : -1, ordering: .relaxed)
    }

    /// Notes the caps on waiting long-polls, for the exposition.
    func longPollLimits(perUser: Int, total: Int) {
        longPollCaps.withLock { $0 = (perUser, total) }
    }

    /// Notes a long-poll starting (+1) or ending (-1) its wait.
    func longPollChanged(by delta: Int) {
        longPolls.wrappingAdd(delta, ordering: .relaxed)
    }

    /// Notes a long-poll refused past a cap.
    func longPollRefused() {
        longPollsRefused.wrappingAdd(1, ordering: .relaxed)
    }

    /// The long-polls waiting now.
    public var waitingLongPolls: Int { longPolls.load(ordering: .relaxed) }

    /// The open connections now.
    public var activeConnections: Int { connections.load(ordering: .relaxed) }

    /// The exposition text.
    public func render() -> String {
        let snapshot = counts.withLock { $0 }
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
        }
        family("walletvault_http_requests_total", "counter", "Requests answered, by route and status.")
        for (key, value) in snapshot.requests.sorted(by: { ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status) }) {
            lines.append("walletvault_http_requests_total{route=\"\(key.route)\",status=\"\(key.status)\"} \(value)")
        }
        family("walletvault_http_request_duration_seconds", "histogram", "Time from a complete request to its answer.")
        var cumulative = 0
        for (bound, count) in zip(Self.latencyBuckets, snapshot.latencyBuckets) {
            cumulative += count
            lines.append("walletvault_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)")
        }
        lines.append("walletvault_http_request_duration_seconds_bucket{le=\"+Inf\"} \(snapshot.latencyCount)")
        lines.append("walletvault_http_request_duration_seconds_sum \(snapshot.latencySum)")
        lines.append("walletvault_http_request_duration_seconds_count \(snapshot.latencyCount)")
        family("walletvault_http_request_bytes_total", "counter", "Request body bytes received.")
        lines.append("walletvault_http_request_bytes_total \(snapshot.requestBytes)")
        family("walletvault_http_response_bytes_total", "counter", "Response body bytes sent.")
        lines.append("walletvault_http_response_bytes_total \(snapshot.responseBytes)")
        family("walletvault_rate_limited_saves_total", "counter", "Saves refused with 429.")
        lines.append("walletvault_rate_limited_saves_total \(snapshot.rateLimitedSaves)")
        family("walletvault_conflicts_total", "counter", "Saves refused with 409.")
        lines.append("walletvault_conflicts_total \(snapshot.conflicts)")
        family("walletvault_store_errors_total", "counter", "Requests that failed because the database failed.")
        lines.append("walletvault_store_errors_total \(snapshot.storeErrors)")
        family("walletvault_active_connections", "gauge", "Open client connections.")
        lines.append("walletvault_active_connections \(activeConnections)")
        let caps = longPollCaps.withLock { $0 }
        for (name, type, help, value) in [
            ("walletvault_long_polls_waiting", "gauge", "Long-polls (load with wait) waiting for a change.", waitingLongPolls),
            ("walletvault_long_polls_limit", "gauge", "Most long-polls that may wait at once on this node.", caps.total),
            ("walletvault_long_polls_per_user_limit", "gauge", "Most long-polls one user may have waiting at once.", caps.perUser),
            (
                "walletvault_long_polls_refused_total", "counter", "Long-polls refused with 429 past a cap.",
                longPollsRefused.load(ordering: .relaxed)
            ),
        ] {
            family(name, type, help)
            lines.append("\(name) \(value)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
