import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP connection for requests URLSession cannot make: partial bodies, idle sockets.
public final class RawHTTPConnection {
    private let socketDescriptor: Int32

    /// Connects to 127.0.0.1 on `port`.
    ///
    /// - Throws: when the connection is refused.
    public init(port: UInt16) throws {
        socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in.loopback(port: port)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socketDescriptor)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit {
        close(socketDescriptor)
    }

    /// Writes `bytes`, all of them, ignoring a peer that has gone.
    public func send(_ bytes: Data) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let sent = Glibc.send(socketDescriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { return }
                offset += sent
            }
        }
    }

    /// Writes `text` as UTF-8.
    public func send(_ text: String) {
        send(Data(text.utf8))
    }

    /// Sends all of `bytes`; false once the server has closed or reset the connection.
    public func trySend(_ bytes: Data) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let sent = Glibc.send(socketDescriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }

    /// Whether the server has closed the connection: a read that would not block finds its end or a reset.
    public var isClosedByPeer: Bool {
        var byte: UInt8 = 0
        let count = recv(socketDescriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count == 0 { return true }
        return count < 0 && errno != EAGAIN && errno != EWOULDBLOCK
    }

    /// Everything the server sends until it closes the connection or `limit` bytes arrive.
    public func receiveAll(limit: Int = 1 << 20) -> Data {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while received.count < limit {
            let count = recv(socketDescriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return received
    }
}
