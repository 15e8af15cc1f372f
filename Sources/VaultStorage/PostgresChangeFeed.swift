import Foundation
import Synchronization

/// The change feed of several nodes sharing PostgreSQL: `NOTIFY` on one channel with the change tag as payload, and
/// on each node one connection that `LISTEN`s to it.
///
/// One channel for every user, not one per user: a node then listens once, however many users wait on it, and a
/// payload is a tag that names no one. PostgreSQL delivers a notification only after its sender's transaction commits
/// (here the `NOTIFY` runs after the save committed). When the listening connection is lost (a restart, a failover),
/// it is made again, and every waiter is told to re-read, since what was announced meanwhile never arrives.
public final class PostgresChangeFeed: BlobChangeFeed, @unchecked Sendable {
    // @unchecked: `listener` is set in init and joined in stop; the rest is under locks or atomics.
    /// The channel every node listens on.
    static let channel = "walletvault_blob_changed"

    private let url: String
    /// The connection `publish` sends on, opened on first use and again after a failure.
    private let sender = Mutex<PostgresConnection?>(nil)
    /// Set when the engine refuses `pg_notify` itself (CockroachDB has no LISTEN/NOTIFY): saves then stop trying.
    private let notifyUnsupported = Atomic<Bool>(false)
    private let subscribers = Mutex<[ChangeSubscriber]>([])
    private let stopping = Atomic<Bool>(false)
    /// Written once to end the listener's poll at once.
    private let stopPipe: (read: Int32, write: Int32)
    private let listenerDone = DispatchSemaphore(value: 0)
    private let listening = Atomic<Bool>(false)
    /// How long the listening connection may be silent before it is asked to answer a `SELECT 1`.
    private let heartbeatSeconds: Double
    /// How long a statement on the listening connection may take before the connection is taken for lost.
    private let answerTimeoutSeconds: Double

    /// Starts listening on the database at a `postgresql://` URL, connecting again whenever the connection is lost.
    ///
    /// A connection silent for `heartbeatSeconds` must answer a `SELECT 1` within `answerTimeoutSeconds`, or it is
    /// taken for lost: a listener on a half-open socket (a NAT timeout, a failover without a reset) otherwise hears
    /// nothing and notices nothing for as long as TCP takes to give up, about two hours, while every cross-node
    /// wake-up on this node waits for its waiter's deadline.
    public init(url: String, heartbeatSeconds: Double = 30, answerTimeoutSeconds: Double = 10) {
        self.url = url
        self.heartbeatSeconds = heartbeatSeconds
        self.answerTimeoutSeconds = answerTimeoutSeconds
        var descriptors: [Int32] = [-1, -1]
        _ = pipe(&descriptors)
        stopPipe = (descriptors[0], descriptors[1])
        let thread = Thread { [self] in
            listen()
            listenerDone.signal()
        }
        thread.name = "walletvault-change-listener"
        thread.start()
    }

    deinit {
        close(stopPipe.read)
        close(stopPipe.write)
    }

    /// Whether the listening connection is up and listening now.
    public var isListening: Bool { listening.load(ordering: .acquiring) }

    public func publish(_ tag: String) {
        guard !notifyUnsupported.load(ordering: .relaxed) else { return }
        sender.withLock { connection in
            // Twice at most: a connection idle through a restart fails once, and a new one is made for the retry.
            for _ in 0..<2 {
                do throws(StoreError) {
                    if connection == nil || connection?.isAlive != true { connection = try PostgresConnection(url: url) }
                    _ = try connection?.query(.notify, [.text(Self.channel), .text(tag)])
                    return
                } catch {
                    // The waiters elsewhere re-read at their deadline at the latest (docs/SCALING.md).
                    // 42883 undefined function, 0A000 feature not supported: the engine has no pg_notify. Any other
                    // refusal (a full notification queue, 54000) may pass, and the next save tries again.
                    if error.code == .corrupt, ["42883", "0A000"].contains(where: error.reason.contains) {
                        notifyUnsupported.store(true, ordering: .relaxed)
                        return
                    }
                    connection = nil
                }
            }
        }
    }

    public func subscribe(
        onChange: @escaping @Sendable (String) -> Void, onMissed: @escaping @Sendable () -> Void,
        onLost: @escaping @Sendable () -> Void
    ) {
        let subscriber = ChangeSubscriber(onChange: onChange, onMissed: onMissed, onLost: onLost)
        subscribers.withLock { $0.append(subscriber) }
    }

    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        listenerDone.wait()
        sender.withLock { $0 = nil }
    }

    private func listen() {
        var backoffSeconds = 0.1
        while !stopping.load(ordering: .relaxed) {
            do throws(StoreError) {
                let connection = try PostgresConnection(url: url)
                let early = try connection.runListening(
                    "LISTEN \(Self.channel)", timeoutSeconds: answerTimeoutSeconds, interruption: stopPipe.read)
                listening.store(true, ordering: .releasing)
                backoffSeconds = 0.1
                // Announcements made before this LISTEN (at startup, or while the connection was down) never arrive.
                for subscriber in subscribers.withLock({ $0 }) { subscriber.onMissed() }
                hand(early)
                try relay(from: connection)
            } catch {
                listening.store(false, ordering: .releasing)
                for subscriber in subscribers.withLock({ $0 }) { subscriber.onLost() }
                if waitForStop(seconds: backoffSeconds) { return }
                backoffSeconds = min(backoffSeconds * 2, 2)
            }
        }
    }

    /// Hands each notification to the subscriber until the connection fails (throws) or the feed stops (returns).
    private func relay(from connection: PostgresConnection) throws(StoreError) {
        while !stopping.load(ordering: .relaxed) {
            var descriptors = [
                pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, Int32(heartbeatSeconds * 1000))
            if ready < 0 && errno == EINTR { continue }
            if descriptors[1].revents != 0 { return }
            if ready == 0 {
                hand(try connection.runListening("SELECT 1", timeoutSeconds: answerTimeoutSeconds, interruption: stopPipe.read))
                continue
            }
            guard descriptors[0].revents != 0 else { continue }
            hand(try connection.receivedNotifications())
        }
    }

    /// Hands notifications' tags to every subscriber, oldest first.
    private func hand(_ tags: [String]) {
        guard !tags.isEmpty else { return }
        let subscribers = subscribers.withLock { $0 }
        for tag in tags { for subscriber in subscribers { subscriber.onChange(tag) } }
    }

    /// Sleeps up to `seconds`; returns whether the feed was stopped meanwhile.
    private func waitForStop(seconds: Double) -> Bool {
        var descriptor = pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(seconds * 1000))
        return stopping.load(ordering: .relaxed)
    }
}

extension PostgresStatement {
    static let notify = Self(name: "notify_change", sql: "SELECT pg_notify($1, $2)")
}
