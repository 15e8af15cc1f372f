import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP proxy to a local port whose open connections can be made to go silent without being closed: the
/// half-open socket a NAT timeout or a failover without a reset leaves behind.
public final class StallingTCPProxy: Sendable {
    private struct State {
        var sockets: [Int32] = []
        /// Connections accepted before this count of them are stalled.
        var stalledBelow = 0
        var accepted = 0
        var closed = false
        /// Pumps that ended, by connection: the second closes both sockets, when neither is used any more.
        var pumpsEnded: [Int: Int] = [:]
    }

    /// The loopback port to connect to instead of the target's.
    public let port: UInt16
    private let target: UInt16
    private let listener: Int32
    private let state = Mutex(State())

    /// Listens on a free loopback port and forwards each connection to `target` on loopback.
    public init(target: UInt16) throws {
        self.target = target
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(listener, generic, length) == 0 && listen(listener, 16) == 0
                    && getsockname(listener, generic, &length) == 0
            }
        }
        guard listener >= 0, bound else { throw POSIXError(.EADDRNOTAVAIL) }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops forwarding on every connection open now and keeps them open; later connections are forwarded.
    public func stallOpenConnections() {
        state.withLock { $0.stalledBelow = $0.accepted }
    }

    /// Closes the listener and every connection.
    public func close() {
        // Under the lock: a pump that ends closes its sockets under it too, so no number shut here was reused.
        state.withLock { state in
            state.closed = true
            for socket in state.sockets { shutdown(socket, Int32(SHUT_RDWR)) }
        }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while !state.withLock({ $0.closed }) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in.loopback(port: target)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else {
                Glibc.close(client)
                Glibc.close(upstream)
                continue
            }
            let number = state.withLock { state in
                state.sockets += [client, upstream]
                state.accepted += 1
                return state.accepted - 1
            }
            Thread.detachNewThread { [self] in pump(from: client, to: upstream, connection: number) }
            Thread.detachNewThread { [self] in pump(from: upstream, to: client, connection: number) }
        }
        Glibc.close(listener)
    }

    /// Copies bytes until either side ends, holding them back while the connection is stalled.
    private func pump(from source: Int32, to sink: Int32, connection: Int) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let (closed, stalled) = state.withLock { ($0.closed, connection < $0.stalledBelow) }
            if closed { break }
            if stalled {
                usleep(50_000)
                continue
            }
            var descriptor = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let count = read(source, &buffer, buffer.count)
            // MSG_NOSIGNAL: the other side may have closed already, and a write's SIGPIPE would end the test process.
            guard count > 0, send(sink, buffer, count, Int32(MSG_NOSIGNAL)) == count else { break }
        }
        shutdown(sink, Int32(SHUT_RDWR))
        state.withLock { state in
            state.pumpsEnded[connection, default: 0] += 1
            guard state.pumpsEnded[connection] == 2 else { return }
            state.sockets.removeAll { $0 == source || $0 == sink }
            Glibc.close(source)
            Glibc.close(sink)
        }
    }
}
