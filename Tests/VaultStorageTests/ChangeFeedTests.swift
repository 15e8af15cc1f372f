import Foundation
import Synchronization
import Testing
import VaultTestSupport

@testable import VaultStorage

/// A change feed calls its subscriber the same way after any number of announcements.
///
/// A subscriber kept as a bare closure in a `Mutex` was re-wrapped in two reabstraction thunks on every `withLock`
/// that read it (the closure passes through the lock's generic `inout`), so each announcement left the next one a
/// longer chain of thunks to call through (48 bytes of stack each in an `-O` build of the pattern, 80 in debug): the
/// soak's 20 000 saves left every storage thread 1.2 MiB of stack touched (RSS +35% in 300 s), and a long-lived node
/// would in the end overflow its stack.
@Suite struct ChangeFeedTests {
    /// The stack addresses at which `subscriber` was entered, in order.
    final class DepthRecorder: Sendable {
        let addresses = Mutex<[Int]>([])

        func record() {
            var marker = 0
            let address = withUnsafeMutablePointer(to: &marker) { Int(bitPattern: $0) }
            addresses.withLock { $0.append(address) }
        }

        /// How much deeper (bytes) the last call ran than the first; the stack grows down.
        var growth: Int { addresses.withLock { ($0.first ?? 0) - ($0.last ?? 0) } }
        var count: Int { addresses.withLock { $0.count } }
    }

    @Test func theInProcessFeedCallsItsSubscriberAtOneDepthAfterThousandsOfAnnouncements() {
        let feed = InProcessChangeFeed()
        let recorder = DepthRecorder()
        feed.subscribe(onChange: { _ in recorder.record() }, onMissed: {})
        for _ in 0..<5_000 { feed.publish("tag") }
        #expect(recorder.count == 5_000)
        // Two thunks per announcement would make this tens of KiB; one call path is the same depth every time.
        #expect(recorder.growth < 256)
    }

    /// A node's body cache keeps nothing while its feed cannot hear erasures elsewhere: the feed must say so.
    @Test func aPostgresFeedThatCannotListenTellsItsSubscribers() async throws {
        // Port 1 on loopback refuses at once: every attempt to listen fails.
        let feed = PostgresChangeFeed(url: "postgresql://walletvault@127.0.0.1:1/walletvault?connect_timeout=2")
        defer { feed.stop() }
        let lost = DepthRecorder()
        feed.subscribe(onChange: { _ in }, onMissed: {}, onLost: { lost.record() })
        let told = try await eventually { lost.count > 0 }
        #expect(told, "the subscribers were never told the feed is deaf")
        #expect(!feed.isListening)
    }

    @Test(.enabled(if: TestPostgres.enabled, TestPostgres.skipMessage))
    func thePostgresFeedCallsItsSubscriberAtOneDepthAfterThousandsOfNotifications() async throws {
        let feed = PostgresChangeFeed(url: try TestPostgres.requireURL())
        defer { feed.stop() }
        let recorder = DepthRecorder()
        let tag = "depth-\(UUID().uuidString)"
        feed.subscribe(onChange: { if $0 == tag { recorder.record() } }, onMissed: {})
        let listening = try await eventually { feed.isListening }
        #expect(listening, "the feed never listened")
        for _ in 0..<2_000 { feed.publish(tag) }
        let delivered = try await eventually(timeout: .seconds(30)) { recorder.count == 2_000 }
        #expect(delivered, "\(recorder.count) of 2000 notifications delivered")
        #expect(recorder.growth < 256)
    }

    /// A listening connection that goes silent without closing (a NAT timeout, a failover without a reset) is found
    /// out by its heartbeat and made again, and notifications reach the node again. Before, the listener's `poll`
    /// waited without end: `isListening` stayed true and no other node's save woke a waiter here until TCP gave up.
    @Test(.enabled(if: TestPostgres.enabled, TestPostgres.skipMessage))
    func aListeningConnectionThatGoesSilentIsFoundOutAndMadeAgain() async throws {
        let url = try TestPostgres.requireURL()
        let port = try #require(URLComponents(string: url)?.port.flatMap { UInt16(exactly: $0) })
        let proxy = try StallingTCPProxy(target: port)
        defer { proxy.close() }
        var proxied = try #require(URLComponents(string: url))
        proxied.port = Int(proxy.port)
        let feed = PostgresChangeFeed(url: try #require(proxied.string), heartbeatSeconds: 0.5, answerTimeoutSeconds: 1)
        defer { feed.stop() }
        let sender = PostgresChangeFeed(url: url)
        defer { sender.stop() }
        let tag = "silent-\(UUID().uuidString)"
        let heard = DepthRecorder()
        let lost = DepthRecorder()
        feed.subscribe(onChange: { if $0 == tag { heard.record() } }, onMissed: {}, onLost: { lost.record() })
        #expect(try await eventually { feed.isListening }, "the feed never listened")
        proxy.stallOpenConnections()
        #expect(try await eventually(timeout: .seconds(15)) { lost.count > 0 }, "the silent connection was never found out")
        #expect(try await eventually(timeout: .seconds(15)) { feed.isListening }, "the feed did not listen again")
        sender.publish(tag)
        #expect(try await eventually(timeout: .seconds(15)) { heard.count == 1 }, "the notification did not arrive")
    }
}
