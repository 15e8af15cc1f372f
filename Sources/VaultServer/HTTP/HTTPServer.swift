import CMicroHTTPD
import CVaultShims
import Foundation
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: epoll, a worker thread pool, bodies capped per route.
///
/// libmicrohttpd parses HTTP; this class only moves complete requests to a `HTTPResponder`
/// and its answers back, and enforces the body cap while the upload arrives.
///
/// Requests the responder says wait on storage are answered off the worker threads: the connection is
/// suspended, the request runs on a `BlockingWorkPool`, and the connection resumes with the answer. A worker
/// thread serves many connections, so one held for a disk flush would stall them all, and the saves
/// waiting on one commit could never outnumber the workers, which is what lets a commit carry many.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `daemon` is written only by start/stop, which callers do not run concurrently.

    /// Listening and resource limits.
    public struct Options: Sendable {
        /// IPv4 address to bind.
        public var host = "127.0.0.1"
        /// Port to bind; 0 picks a free one.
        public var port: UInt16 = 8080
        /// Worker threads.
        public var threads = 4
        /// Threads for requests that wait on storage: the most saves that can wait on one commit together.
        public var storageThreads = 64
        /// Most open connections in all.
        public var connectionLimit = 1024
        /// Most open connections from one IP; 0 for no cap.
        public var perIPConnectionLimit = 0
        /// Seconds of inactivity before a connection is closed.
        public var connectionTimeoutSeconds = 30
        /// PEM certificate chain and key for HTTPS; nil serves plain HTTP.
        public var tls: (certificate: String, key: String)?
        /// The protocol versions, suites and groups HTTPS offers (ignored for plain HTTP).
        public var tlsProfile = TLSProfile.intermediate
        /// Memory for one connection's headers and buffers; libmicrohttpd zeroes it for every
        /// request, so a larger pool costs on every request. Headers past it get 431.
        public var connectionMemoryLimit = 16 * 1024

        /// Creates default options.
        public init() {}
    }

    private let options: Options
    private let responder: any HTTPResponder
    private let metrics: ServerMetrics?
    private var daemon: OpaquePointer?
    /// Requests between their first byte and their completion, for draining.
    private let inFlight = Atomic<Int>(0)
    /// Set once draining starts: answers then close their connection so clients stop reusing it.
    private let draining = Atomic<Bool>(false)
    /// Where requests that wait on storage run while their connection is suspended; set while started.
    private var storageWorkers: BlockingWorkPool?
    /// Requests running on `storageWorkers`: libmicrohttpd must not stop while a connection is suspended.
    private let suspended = DispatchGroup()

    /// Creates a server; nothing listens until `start`. `metrics` learns of connections opening and closing.
    public init(options: Options, responder: any HTTPResponder, metrics: ServerMetrics? = nil) {
        self.options = options
        self.responder = responder
        self.metrics = metrics
    }

    deinit { stop() }

    /// Starts listening and returns the bound port.
    ///
    /// - Throws: `ServerStartupError` when the address cannot be bound.
    @discardableResult
    public func start() throws(ServerStartupError) -> UInt16 {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let certificate = options.tls.map { strdup($0.certificate) } ?? nil
        let key = options.tls.map { strdup($0.key) } ?? nil
        defer {
            // libmicrohttpd copies the PEM text into its TLS credentials while starting.
            free(certificate)
            if let key { memset(key, 0, strlen(key)) }
            free(key)
        }
        let started = options.host.withCString { host in
            options.tlsProfile.gnutlsPriorities.withCString { priorities -> OpaquePointer? in
                var native = wv_mhd_options(
                    host: host, port: options.port, threads: UInt32(options.threads),
                    connection_limit: UInt32(options.connectionLimit),
                    per_ip_connection_limit: UInt32(options.perIPConnectionLimit),
                    connection_timeout_seconds: UInt32(options.connectionTimeoutSeconds),
                    connection_memory_limit: options.connectionMemoryLimit,
                    tls_certificate_pem: certificate, tls_key_pem: key, tls_priorities: priorities)
                // libmicrohttpd turns the priority string into GnuTLS's priority cache while starting.
                return wv_mhd_start(&native, httpServerAccessHandler, context, httpServerCompletedHandler, context,
                                    httpServerConnectionHandler)
            }
        }
        guard let started else {
            let reason = String(cString: strerror(errno))
            guard options.tls == nil else {
                // libmicrohttpd has logged its own reason (GnuTLS refusing the certificate, key or priorities) above.
                throw ServerStartupError("cannot start HTTPS on \(options.host):\(options.port): \(reason)")
            }
            throw ServerStartupError("cannot listen on \(options.host):\(options.port): \(reason)")
        }
        daemon = started
        storageWorkers = BlockingWorkPool(threads: options.storageThreads, name: "walletvault-storage")
        return wv_mhd_bound_port(started)
    }

    /// Stops accepting, lets requests in flight finish for up to `graceSeconds`, then stops.
    ///
    /// Returns whether every request in flight finished within the grace period.
    @discardableResult
    public func drain(graceSeconds: Double) -> Bool {
        draining.store(true, ordering: .releasing)
        if let daemon { wv_mhd_quiesce(daemon) }
        let deadline = Date().addingTimeInterval(graceSeconds)
        while inFlight.load(ordering: .acquiring) > 0 && Date() < deadline {
            usleep(10_000)
        }
        let drained = inFlight.load(ordering: .acquiring) == 0
        stop()
        return drained
    }

    /// Stops the server, closing every connection.
    public func stop() {
        suspended.wait()
        if let daemon { MHD_stop_daemon(daemon) }
        daemon = nil
        storageWorkers?.shutDown()
        storageWorkers = nil
    }

    /// How much of an over-limit body is read and thrown away so the client can read the 413.
    ///
    /// Clients that do not wait for `100 Continue` write the whole body before reading; closing
    /// at once would hand them a broken pipe instead of the answer (the "lingering close" nginx does).
    static let drainAllowance = 1024 * 1024

    fileprivate func handle(
        connection: OpaquePointer, url: String, method: String, data: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let existing = state.pointee else {
            let limit = responder.bodyLimit(method: method, path: url)
            let upload = UploadState(method: method, path: url, limit: limit)
            state.pointee = Unmanaged.passRetained(upload).toOpaque()
            inFlight.wrappingAdd(1, ordering: .relaxed)
            if let declared = Self.value(connection, .HEADER_KIND, "Content-Length"), let length = Int(declared), length > limit {
                // Decided before reading: the body is never buffered, at most drained.
                upload.refused = true
                let waitsForContinue = Self.value(connection, .HEADER_KIND, "Expect")?.lowercased() == "100-continue"
                if waitsForContinue || length - limit > Self.drainAllowance { return refuse(upload, on: connection) }
            }
            return .YES
        }
        let upload = Unmanaged<UploadState>.fromOpaque(existing).takeUnretainedValue()
        guard uploadSize.pointee == 0 else {
            let count = uploadSize.pointee
            uploadSize.pointee = 0
            upload.received += count
            if upload.received > upload.limit && !upload.refused {
                // A chunked or lying body grew past the cap: stop keeping it.
                upload.refused = true
                upload.body = Data()
            }
            if upload.refused {
                // Past the drain allowance the body is still arriving, and libmicrohttpd cannot answer
                // mid-upload: cut the connection, and count no 413 that was never sent.
                return upload.received - upload.limit > Self.drainAllowance ? .NO : .YES
            }
            if let data {
                data.withMemoryRebound(to: UInt8.self, capacity: count) { upload.body.append($0, count: count) }
            }
            return .YES
        }
        if let response = upload.offloadedResponse.withLock({ $0.take() }) {
            // Called again after the resume: the answer is ready.
            return Self.queue(response, on: connection, closing: draining.load(ordering: .acquiring))
        }
        if upload.answered { return .YES }
        if upload.refused { return refuse(upload, on: connection) }
        let request = HTTPRequest(
            method: method, path: url, query: Self.values(connection, .GET_ARGUMENT_KIND),
            headers: Self.values(connection, .HEADER_KIND), body: upload.body,
            remoteAddress: Self.remoteAddress(connection))
        guard let storageWorkers, responder.waitsOnStorage(request) else {
            return Self.queue(responder.respond(to: request), on: connection, closing: draining.load(ordering: .acquiring))
        }
        upload.answered = true
        upload.body = Data()
        MHD_suspend_connection(connection)
        let resumable = SuspendedConnection(connection)
        suspended.enter()
        storageWorkers.run { [responder, suspended] in
            let response = responder.respond(to: request)
            upload.offloadedResponse.withLock { $0 = response }
            MHD_resume_connection(resumable.connection)
            suspended.leave()
        }
        return .YES
    }

    private func refuse(_ upload: UploadState, on connection: OpaquePointer) -> MHD_Result {
        guard !upload.answered else { return .YES }
        upload.answered = true
        let response = responder.tooLargeResponse(method: upload.method, path: upload.path, limit: upload.limit)
        return Self.queue(response, on: connection, closing: true)
    }

    fileprivate func completed(state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let state, let existing = state.pointee else { return }
        Unmanaged<UploadState>.fromOpaque(existing).release()
        state.pointee = nil
        inFlight.wrappingSubtract(1, ordering: .releasing)
    }

    fileprivate func connection(opened: Bool) {
        metrics?.connectionChanged(opened: opened)
    }

    private static func queue(_ response: HTTPResponse, on connection: OpaquePointer, closing: Bool) -> MHD_Result {
        let native = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                            .RESPMEM_MUST_COPY)
        }
        guard let native else { return .NO }
        defer { MHD_destroy_response(native) }
        for (name, value) in response.headers {
            _ = MHD_add_response_header(native, name, value)
        }
        if closing { _ = MHD_add_response_header(native, "Connection", "close") }
        return MHD_queue_response(connection, UInt32(response.status), native)
    }

    private static func value(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ name: String) -> String? {
        MHD_lookup_connection_value(connection, kind, name).map { String(cString: $0) }
    }

    /// Header fields by lower-cased name, repeats joined with ", " (RFC 9110 §5.3); query arguments by
    /// name as sent, the first of repeats kept, so `action=load&action=save` cannot be read two ways.
    private static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [String: String] {
        final class Collector {
            let isHeader: Bool
            var values: [String: String] = [:]
            init(isHeader: Bool) { self.isHeader = isHeader }
        }
        let collector = Collector(isHeader: kind == .HEADER_KIND)
        _ = MHD_get_connection_values(connection, kind, { context, _, key, value in
            guard let context, let key else { return .YES }
            let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
            let text = value.map { String(cString: $0) } ?? ""
            guard collector.isHeader else {
                let name = String(cString: key)
                if collector.values[name] == nil { collector.values[name] = text }
                return .YES
            }
            let name = String(cString: key).lowercased()
            collector.values[name] = collector.values[name].map { $0 + ", " + text } ?? text
            return .YES
        }, Unmanaged.passUnretained(collector).toOpaque())
        return collector.values
    }

    private static func remoteAddress(_ connection: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard wv_mhd_client_address(connection, &buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The body read so far for one request, owned by libmicrohttpd's per-request slot.
private final class UploadState: @unchecked Sendable {
    // @unchecked: only libmicrohttpd's thread for this connection touches the plain properties; a storage
    // worker touches only `offloadedResponse`, under its lock.
    let method: String
    let path: String
    let limit: Int
    var body = Data()
    /// Bytes of body seen, kept or not.
    var received = 0
    /// The body is over the limit: it is drained, not kept.
    var refused = false
    /// An answer is queued or being made; later upload calls only discard.
    var answered = false
    /// The answer made by a storage worker, handed back when the connection resumes.
    let offloadedResponse = Mutex<HTTPResponse?>(nil)

    init(method: String, path: String, limit: Int) {
        self.method = method
        self.path = path
        self.limit = limit
    }
}

/// A suspended connection, handed to a storage worker to resume.
private struct SuspendedConnection: @unchecked Sendable {
    // @unchecked: libmicrohttpd allows MHD_resume_connection from any thread.
    let connection: OpaquePointer

    init(_ connection: OpaquePointer) {
        self.connection = connection
    }
}

private let httpServerAccessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, data, uploadSize, state in
    guard let context, let connection, let url, let method, let uploadSize, let state else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    return server.handle(connection: connection, url: String(cString: url), method: String(cString: method),
                         data: data, uploadSize: uploadSize, state: state)
}

private let httpServerConnectionHandler: MHD_NotifyConnectionCallback = { context, _, _, code in
    guard let context else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().connection(opened: code == .CONNECTION_NOTIFY_STARTED)
}

private let httpServerCompletedHandler: MHD_RequestCompletedCallback = { context, _, state, _ in
    guard let context else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().completed(state: state)
}
