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
        /// Worker threads; `defaultThreads` unless set.
        public var threads = Options.defaultThreads
        /// One worker per core the process may use, at least two. Each worker is an event loop that never waits
        /// on storage, so more workers than cores only take turns on them: on two cores, four workers gave as many
        /// mints as two with twice the p99 (docs/PERFORMANCE.md, D1 mint).
        public static let defaultThreads = max(2, ProcessInfo.processInfo.activeProcessorCount)
        /// Threads for requests that wait on storage: the most saves that can wait on one commit together.
        public var storageThreads = 64
        /// Most open connections in all.
        public var connectionLimit = 1024
        /// Most open connections from one IP; 0 for no cap.
        public var perIPConnectionLimit = 0
        /// Seconds of inactivity before a connection is closed.
        public var connectionTimeoutSeconds = 30
        /// Seconds a request's header section may take, counted from the connection opening or the previous
        /// answer; a client still sending headers then is cut off (a slowloris sends a byte before each idle timeout).
        public var headerTimeoutSeconds: Double = 20
        /// The slowest average a body may arrive at, in bytes per second since its headers ended, once
        /// `bodyGraceSeconds` have passed; a slower upload is cut off. 0 turns the check off.
        public var bodyMinimumBytesPerSecond = 1024
        /// Seconds a body may take before its average rate is checked at all.
        public var bodyGraceSeconds: Double = 10
        /// PEM certificate chain and key for HTTPS; nil serves plain HTTP.
        public var tls: (certificate: String, key: String)?
        /// The protocol versions, suites and groups HTTPS offers (ignored for plain HTTP).
        public var tlsProfile = TLSProfile.intermediate
        /// Memory for one connection's headers and buffers; libmicrohttpd zeroes it for every
        /// request, so a larger pool costs on every request. The header gate answers 431 to a header section past
        /// 16 KiB as sent or past 100 fields (`WV_GATE_HEADER_LIMIT`, `WV_GATE_FIELD_LIMIT`); libmicrohttpd keeps each
        /// field's entry (56 bytes) beside the section's bytes in this pool, so at 16 KiB a hundred 120-byte fields
        /// (12 KiB sent) got its own 431 (issue 29, finding 9). 24 KiB holds a 16 KiB section of 100 fields and the
        /// answer; at 32 KiB a /healthz cost some 2 µs more CPU than at 16 (the pool is zeroed per request), at 24
        /// KiB 128 such fields left no room for the answer, hence 100.
        public var connectionMemoryLimit = 24 * 1024

        /// Creates default options.
        public init() {}
    }

    private let options: Options
    private let responder: any HTTPResponder
    private let connectionObserver: (@Sendable (_ opened: Bool) -> Void)?
    private var daemon: OpaquePointer?
    /// Requests held open now (long-polls).
    public var heldRequests: Int { held.count }
    /// Requests between their first byte and their completion, for draining.
    private let inFlight = Atomic<Int>(0)
    /// Set once draining starts: answers then close their connection so clients stop reusing it.
    private let draining = Atomic<Bool>(false)
    /// Where requests that wait on storage run while their connection is suspended; set while started.
    private var storageWorkers: BlockingWorkPool?
    /// Requests running on `storageWorkers`: libmicrohttpd must not stop while a connection is suspended.
    private let suspended = DispatchGroup()
    /// Whether a request may still be handed to `storageWorkers`. `stop` closes it before it waits for `suspended`,
    /// under the same lock as each such `suspended.enter()`: a request whose headers arrived just after that wait
    /// began was suspended all the same, and libmicrohttpd aborts the process when it stops with a connection
    /// suspended ("MHD_stop_daemon() called while we have suspended connections", seen at SIGTERM).
    private let offloading = Mutex(true)
    /// Open connections and when their current header section began, for the header deadline.
    private let watch = ConnectionWatch()
    /// Requests held open (long-polls), their deadlines and their clients' hang-ups.
    private let held = HeldRequestWatch()

    /// Creates a server; nothing listens until `start`. `connectionObserver` learns of connections opening and closing.
    public init(options: Options, responder: any HTTPResponder, connectionObserver: (@Sendable (_ opened: Bool) -> Void)? = nil) {
        self.options = options
        self.responder = responder
        self.connectionObserver = connectionObserver
    }

    deinit { stop() }

    /// Starts listening and returns the bound port.
    ///
    /// - Throws: `HTTPServerStartError` when the address cannot be bound, TLS refuses its credentials, or the watch of
    ///   held requests could not be made.
    @discardableResult
    public func start() throws(HTTPServerStartError) -> UInt16 {
        // Without its epoll set the watch's thread would find `epoll_wait` failing at once and spin a core.
        guard held.canWatch else {
            throw HTTPServerStartError("cannot make the epoll set that watches held requests (no descriptor left?)")
        }
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
                    tls_certificate_pem: certificate, tls_key_pem: key, tls_priorities: priorities,
                    uri_log: httpServerURILogHandler)
                // libmicrohttpd turns the priority string into GnuTLS's priority cache while starting.
                return wv_mhd_start(
                    &native, httpServerAccessHandler, context, httpServerCompletedHandler, context,
                    httpServerConnectionHandler)
            }
        }
        guard let started else {
            let reason = String(cString: strerror(errno))
            guard options.tls == nil else {
                // libmicrohttpd has logged its own reason (GnuTLS refusing the certificate, key or priorities) above.
                throw HTTPServerStartError("cannot start HTTPS on \(options.host):\(options.port): \(reason)")
            }
            throw HTTPServerStartError("cannot listen on \(options.host):\(options.port): \(reason)")
        }
        daemon = started
        storageWorkers = BlockingWorkPool(threads: options.storageThreads, name: "walletvault-storage")
        held.start()
        watch.startSweeping(headerTimeoutSeconds: options.headerTimeoutSeconds)
        return wv_mhd_bound_port(started)
    }

    /// Stops accepting, lets requests in flight finish for up to `graceSeconds`, then stops.
    ///
    /// Returns whether every request in flight finished within the grace period.
    @discardableResult
    public func drain(graceSeconds: Double) -> Bool {
        draining.store(true, ordering: .releasing)
        if let daemon { wv_mhd_quiesce(daemon) }
        // A long-poll would hold the drain for its whole wait: each is answered now, with its fallback.
        held.releaseAll()
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
        watch.stopSweeping()
        held.stop()
        offloading.withLock { $0 = false }
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
    /// A chunked body that passes the cap is answered at once on plain HTTP (`answerBeforeBodyEnd`) and then
    /// drained; under TLS libmicrohttpd 0.9 can queue the answer only at the body's end. Either way 4 MiB past the
    /// cap is read at most (the minimum body rate still bounds how long that takes), then the connection is cut.
    static let drainAllowance = 4 * 1024 * 1024

    /// Called once the request line is read, before libmicrohttpd percent-decodes the target in place: the
    /// request's state starts here so the target as sent can be checked for an encoded NUL.
    fileprivate func requestLineRead(uri: UnsafePointer<CChar>?) -> UnsafeMutableRawPointer {
        // Searched on the C string's bytes: the target is wanted for nothing else, and a String of it was an
        // allocation and a UTF-8 check on every request.
        let hasEncodedNUL = uri.map { Self.containsEncodedNUL(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? false
        let upload = UploadState(targetHasEncodedNUL: hasEncodedNUL)
        return Unmanaged.passRetained(upload).toOpaque()
    }

    fileprivate func handle(
        connection: OpaquePointer, url: String, method: String, data: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let existing = state.pointee else {
            // No URI-log call made a state (it always does): refuse rather than serve unchecked.
            return .NO
        }
        let upload = Unmanaged<UploadState>.fromOpaque(existing).takeUnretainedValue()
        if !upload.begun {
            upload.begin(method: method, path: url, limit: responder.bodyLimit(method: method, path: url))
            inFlight.wrappingAdd(1, ordering: .relaxed)
            watch.headersArrived(connection)
            if let refusal = Self.framingRefusal(connection, targetHasEncodedNUL: upload.targetHasEncodedNUL) {
                upload.refused = true
                upload.answered = true
                return queue(
                    responder.malformedResponse(method: method, path: url, status: refusal.status, reason: refusal.reason),
                    for: upload, on: connection, closing: true)
            }
            if let declared = Self.value(connection, .HEADER_KIND, "Content-Length"), let length = Int(declared),
                length > upload.limit
            {
                // Decided before reading: the body is never buffered, at most drained.
                upload.refused = true
                let waitsForContinue = Self.value(connection, .HEADER_KIND, "Expect")?.lowercased() == "100-continue"
                if waitsForContinue || length - upload.limit > Self.drainAllowance { return refuse(upload, on: connection) }
            }
            return .YES
        }
        guard uploadSize.pointee == 0 else {
            let count = uploadSize.pointee
            uploadSize.pointee = 0
            upload.received += count
            if upload.isTooSlow(minimumBytesPerSecond: options.bodyMinimumBytesPerSecond, graceSeconds: options.bodyGraceSeconds) {
                // libmicrohttpd cannot answer while the body is still arriving: cutting it is all there is.
                return .NO
            }
            if upload.received > upload.limit && !upload.refused {
                // A chunked body grew past the cap (one with a Content-Length cannot): stop keeping it, and on plain
                // HTTP answer now rather than at the body's end, so a client still sending reads why at once.
                upload.refused = true
                upload.body = Data()
                if options.tls == nil, !answerBeforeBodyEnd(upload, on: connection) { return .NO }
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
            return queue(response, for: upload, on: connection, closing: draining.load(ordering: .acquiring))
        }
        // The answer went out while the body arrived: libmicrohttpd has none to send, so the connection just ends.
        if upload.answeredEarly { return .NO }
        if upload.answered { return .YES }
        if upload.refused { return refuse(upload, on: connection) }
        let request = HTTPRequest(
            method: method, path: url, query: Self.values(connection, .GET_ARGUMENT_KIND),
            lowercasedHeaders: Self.values(connection, .HEADER_KIND), body: upload.body,
            remoteAddress: Self.remoteAddress(connection))
        if responder.mayHold(request) {
            switch responder.hold(request) {
            case .answer(let response):
                return queue(response, for: upload, on: connection, closing: draining.load(ordering: .acquiring))
            case .hold(let seconds, let fallback, let begin):
                upload.answered = true
                upload.body = Data()
                hold(connection, upload: upload, seconds: seconds, fallback: fallback, begin: begin)
                return .YES
            }
        }
        guard let storageWorkers, responder.waitsOnStorage(request) else {
            return queue(
                responder.respond(to: request), for: upload, on: connection, closing: draining.load(ordering: .acquiring))
        }
        let offloaded = offloading.withLock { open in
            if open { suspended.enter() }
            return open
        }
        guard offloaded else {
            // Stopping: answered here, on libmicrohttpd's thread, which the stop waits for.
            return queue(responder.respond(to: request), for: upload, on: connection, closing: true)
        }
        upload.answered = true
        upload.body = Data()
        MHD_suspend_connection(connection)
        let resumable = SuspendedConnection(connection)
        storageWorkers.run { [responder, suspended] in
            let response = responder.respond(to: request)
            upload.offloadedResponse.withLock { $0 = response }
            MHD_resume_connection(resumable.connection)
            suspended.leave()
        }
        return .YES
    }

    /// Suspends the connection until the held request is answered: by the responder, or with the fallback at the
    /// deadline, at a drain or when the client hangs up. While suspended, libmicrohttpd applies no idle timeout to the
    /// connection and the header deadline does not run (its headers have arrived).
    private func hold(
        _ connection: OpaquePointer, upload: UploadState, seconds: Double, fallback: HTTPResponse,
        begin: @Sendable (HeldRequest) -> Void
    ) {
        MHD_suspend_connection(connection)
        suspended.enter()
        let resumable = SuspendedConnection(connection)
        let id = held.makeID()
        let request = HeldRequest(fallback: fallback, seconds: seconds) { [held, suspended] response in
            held.remove(id)
            upload.offloadedResponse.withLock { $0 = response }
            MHD_resume_connection(resumable.connection)
            suspended.leave()
        }
        // Released already (a drain began): answered at once, and the responder still learns of it through `begin`.
        if !held.add(request, id: id, socket: wv_mhd_connection_fd(connection)) { request.answerFallback() }
        begin(request)
    }

    private func refuse(_ upload: UploadState, on connection: OpaquePointer) -> MHD_Result {
        guard !upload.answered else { return .YES }
        upload.answered = true
        let response = responder.tooLargeResponse(method: upload.method, path: upload.path, limit: upload.limit)
        return queue(response, for: upload, on: connection, closing: true)
    }

    /// Sends the 413 for a body past its cap while the body is still arriving, then drains what follows.
    ///
    /// libmicrohttpd 0.9.75 (and 1.0) accepts `MHD_queue_response` only before a body is read or once all of it is
    /// (`MHD_CONNECTION_HEADERS_PROCESSED` or `MHD_CONNECTION_FULL_REQ_RECEIVED`); mid-body it returns `MHD_NO`, and
    /// suspending the connection does not change its state. So the answer is written to the socket here, on the
    /// connection's own thread, where libmicrohttpd is reading and writes nothing, and the socket's sending side is
    /// shut so the client reads the answer and then the end of the stream. libmicrohttpd still frames and drains the
    /// rest of the body (up to `drainAllowance`) and the connection is closed at its end. Plain HTTP only: under TLS
    /// the bytes would have to go through libmicrohttpd's GnuTLS session, and the 413 comes at the body's end.
    /// Returns false when the socket did not take the whole answer; the caller then cuts the connection.
    private func answerBeforeBodyEnd(_ upload: UploadState, on connection: OpaquePointer) -> Bool {
        upload.answered = true
        upload.answeredEarly = true
        let bytes = Self.wireBytes(of: responder.tooLargeResponse(method: upload.method, path: upload.path, limit: upload.limit))
        return bytes.withUnsafeBytes { wv_mhd_send_before_body_end(connection, $0.baseAddress, $0.count) } == 0
    }

    /// The bytes of a complete HTTP/1.1 answer that closes its connection, with the fields libmicrohttpd would add
    /// (`Date`, `Content-Length`, `Connection: close`) and its reason phrase, not a second time if the answer names
    /// them. Only for answers the server makes itself: a field holding CR or LF is left out rather than written.
    static func wireBytes(of response: HTTPResponse, now: time_t = time(nil)) -> Data {
        var moment = tm()
        var when = now
        gmtime_r(&when, &moment)
        var dateBuffer = [CChar](repeating: 0, count: 64)
        let dateLength = strftime(&dateBuffer, dateBuffer.count, "%a, %d %b %Y %H:%M:%S GMT", &moment)
        let date = String(decoding: dateBuffer.prefix(dateLength).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let reason = MHD_get_reason_phrase_for(UInt32(response.status)).map { String(cString: $0) } ?? ""
        var head = "HTTP/1.1 \(response.status) \(reason)\r\nDate: \(date)\r\n"
        let added: Set<String> = ["date", "content-length", "connection"]
        for (name, value) in response.headers
        where !added.contains(name.lowercased()) && !(name + value).utf8.contains(where: { $0 == 13 || $0 == 10 }) {
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(response.body.count)\r\nConnection: close\r\n\r\n"
        return Data(head.utf8) + response.body
    }

    fileprivate func completed(connection: OpaquePointer?, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        if let connection { watch.requestEnded(connection) }
        guard let state, let existing = state.pointee else { return }
        let upload = Unmanaged<UploadState>.fromOpaque(existing).takeRetainedValue()
        state.pointee = nil
        if upload.corked, let connection { _ = wv_mhd_set_cork(connection, 0) }
        // A request refused by libmicrohttpd before its headers were handed over never counted as in flight.
        if upload.begun { inFlight.wrappingSubtract(1, ordering: .releasing) }
    }

    fileprivate func connection(_ connection: OpaquePointer?, opened: Bool) {
        if let connection {
            if opened {
                watch.opened(connection)
                // Every byte of the connection is read through the gate; one it cannot guard is not served at all.
                if wv_gate_open(connection, options.tls == nil ? 0 : 1) != 0 { _ = wv_mhd_shutdown_connection(connection) }
            } else {
                wv_gate_close(connection)
                watch.closed(connection)
            }
        }
        connectionObserver?(opened)
    }

    /// Whether `target` contains the three bytes `%00`.
    static func containsEncodedNUL(_ target: some Sequence<UInt8>) -> Bool {
        var matched = 0
        for byte in target {
            switch (matched, byte) {
            case (_, UInt8(ascii: "%")): matched = 1
            case (1, UInt8(ascii: "0")): matched = 2
            case (2, UInt8(ascii: "0")): return true
            default: matched = 0
            }
        }
        return false
    }

    /// Why a request must be refused before anything else is read: the framing and addressing shapes that two HTTP
    /// parsers (a proxy's and this one) could read two ways.
    ///
    /// The header section was judged as sent, before libmicrohttpd framed it, by the header gate (`header_gate.c` in
    /// `CVaultShims`): a section it refused reaches here as a clean stand-in carrying its code, so there is one reading
    /// of the bytes, the gate's, and libmicrohttpd frames only what the gate let through unchanged or normalised. What is
    /// left here is the target: libmicrohttpd decodes `%00` in the path and query and the C string then ends there
    /// (RFC 9112 §6.1, §6.3; RFC 9110 §5.5).
    static func framingRefusal(_ connection: OpaquePointer, targetHasEncodedNUL: Bool) -> (status: Int, reason: String)? {
        let refusal = wv_gate_refusal_of(connection)
        if refusal != WV_GATE_OK {
            return (Int(wv_gate_status(refusal)), String(cString: wv_gate_reason(refusal)))
        }
        // `%00` is the only spelling of NUL in a target; libmicrohttpd decodes it and the C string then ends there.
        // Searched on the bytes (`requestLineRead`): Foundation's `contains` on a String cost 2% of a D1 mint.
        if targetHasEncodedNUL {
            return (400, "the path or a query value holds an encoded NUL")
        }
        return nil
    }

    private func queue(_ response: HTTPResponse, for upload: UploadState, on connection: OpaquePointer, closing: Bool)
        -> MHD_Result
    {
        guard response.status != 304 else { return Self.queueNotModified(response, on: connection, closing: closing) }
        let native: OpaquePointer?
        if let file = response.file {
            if options.tls == nil {
                native = Self.nativeResponse(file: file)
                // libmicrohttpd 0.9.75 pushes an fd response's header section as a segment of its own before the
                // `sendfile` (it sends headers without MSG_MORE when the body is not in memory): corked, the two leave
                // together, and the client is woken once. `completed` uncorks, which pushes the body's last segment.
                if native != nil, wv_mhd_set_cork(connection, 1) == 0 { upload.corked = true }
            } else {
                native = Self.nativeResponse(readingIn: file)
            }
        } else {
            native = Self.nativeResponse(body: response.body)
        }
        guard let native else { return .NO }
        defer { MHD_destroy_response(native) }
        for (name, value) in response.headers { Self.add(name, value, to: native) }
        if closing { _ = MHD_add_response_header(native, "Connection", "close") }
        return MHD_queue_response(connection, UInt32(response.status), native)
    }

    /// A 304 as RFC 9110 §8.6 has it: without `Content-Length`, or with the length a 200 would have had.
    ///
    /// libmicrohttpd 0.9.75 writes the `Content-Length` of a response's own body on every status but 1xx and 204, so a
    /// 304 made from an empty body said `Content-Length: 0`, a length the representation does not have (issue 29,
    /// finding 5). So a responder names the 200's length in the 304's `Content-Length` field, and the 304 is made as a
    /// response of that size whose bytes libmicrohttpd never asks for (it sends no body with a 304). Without the field
    /// it says 0 as before: an unknown size would make libmicrohttpd add `Transfer-Encoding: chunked` instead.
    private static func queueNotModified(_ response: HTTPResponse, on connection: OpaquePointer, closing: Bool) -> MHD_Result {
        let declared = response.header("Content-Length").flatMap { UInt64($0) }
        guard let native = MHD_create_response_from_callback(declared ?? 0, 1024, noBodyReader, nil, nil)
        else { return .NO }
        defer { MHD_destroy_response(native) }
        for (name, value) in response.headers where name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            add(name, value, to: native)
        }
        if closing { _ = MHD_add_response_header(native, "Connection", "close") }
        return MHD_queue_response(connection, 304, native)
    }

    /// Adds one header field to a libmicrohttpd response. Passed as `String` arguments, a name or value of up to 15
    /// bytes (a small string, such as `ETag` or `no-store`) was copied into a new array to be NUL-terminated: seven
    /// allocations per load; `withCString` gives such a string a terminated copy on the stack.
    private static func add(_ name: String, _ value: String, to native: OpaquePointer) {
        _ = name.withCString { name in value.withCString { value in MHD_add_response_header(native, name, value) } }
    }

    /// Bodies from this size up are sent from the `Data`'s own bytes, kept alive until libmicrohttpd is done with them;
    /// smaller ones are copied, which costs less than the box that keeps them.
    static let sharedBodyMinimumBytes = 1024

    /// A libmicrohttpd response over `body`. A large body is not copied: libmicrohttpd sends from the bytes of a
    /// retained copy of the `Data` (immutable, so a mutation of another copy gets storage of its own), released by its
    /// free callback when the response is destroyed, after the last byte was sent. Such a `Data` is never inline
    /// (inline storage is at most 14 bytes), so its bytes have an address that outlives `withUnsafeBytes`. A 64 KiB
    /// load copied the blob here once more on every request (docs/PERFORMANCE.md, issue 19).
    static func nativeResponse(body: Data) -> OpaquePointer? {
        guard body.count >= sharedBodyMinimumBytes else {
            return body.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
            }
        }
        let owner = Unmanaged.passRetained(ResponseBodyOwner(body))
        let native = owner.takeUnretainedValue().body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer_with_free_callback_cls(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), releaseResponseBody, owner.toOpaque())
        }
        if native == nil { owner.release() }
        return native
    }

    /// A libmicrohttpd response over a file body, which from here on owns the descriptor (and closes it when destroyed):
    /// `sendfile` from the page cache (plain HTTP only: under TLS `queue` uses `nativeResponse(readingIn:)`). Nil when the
    /// descriptor was taken before or libmicrohttpd refuses it (the descriptor is then closed here).
    static func nativeResponse(file: HTTPFileBody) -> OpaquePointer? {
        guard let descriptor = file.takeDescriptor() else { return nil }
        guard let native = MHD_create_response_from_fd_at_offset64(UInt64(file.length), descriptor, UInt64(file.offset)) else {
            close(descriptor)
            return nil
        }
        return native
    }

    /// Under TLS, where libmicrohttpd cannot `sendfile`: the file's bytes read in with one `pread` and sent as a
    /// buffer, the descriptor closed here. libmicrohttpd's own fd response, which reads the file through its callback
    /// buffer under TLS, cost 248–282 µs of CPU per 64 KiB load against 145–156 µs from memory
    /// (`scripts/bench_tls_loads.sh`, paired, docs/PERFORMANCE.md). Nil when the file cannot be read in full.
    static func nativeResponse(readingIn file: HTTPFileBody) -> OpaquePointer? {
        guard let descriptor = file.takeDescriptor() else { return nil }
        defer { close(descriptor) }
        guard file.length > 0 else { return nativeResponse(body: Data()) }
        // Read into memory that libmicrohttpd frees with the response: zero-filling a `Data` to read into was 3.4% of
        // a TLS load's CPU in `memset` alone (docs/PERFORMANCE.md, "Loads from body files").
        guard let buffer = malloc(file.length) else { return nil }
        var done = 0
        while done < file.length {
            let count = pread(descriptor, buffer + done, file.length - done, off_t(file.offset) + off_t(done))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                free(buffer)
                return nil
            }
            done += count
        }
        guard let native = MHD_create_response_from_buffer(file.length, buffer, .RESPMEM_MUST_FREE) else {
            free(buffer)
            return nil
        }
        return native
    }

    private static func value(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ name: String) -> String? {
        MHD_lookup_connection_value(connection, kind, name).map { String(cString: $0) }
    }

    /// Header fields by lower-cased name, repeats joined with ", " (RFC 9110 §5.3); query arguments by
    /// name as sent, the first of repeats kept, so `action=load&action=save` cannot be read two ways.
    private static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [String: String] {
        struct Collector {
            let isHeader: Bool
            var values: [String: String]
        }
        // Counting walks the few fields again but allocates nothing; most requests have no query arguments.
        let count = MHD_get_connection_values(connection, kind, nil, nil)
        guard count > 0 else { return [:] }
        // Sized once (grown from empty, the dictionary was allocated again at two and at four fields), and on the
        // stack: a class instance to carry it through libmicrohttpd was one more allocation per kind.
        var collector = Collector(isHeader: kind == .HEADER_KIND, values: Dictionary(minimumCapacity: Int(count)))
        _ = withUnsafeMutablePointer(to: &collector) { pointer in
            MHD_get_connection_values(
                connection, kind,
                { context, _, key, value in
                    guard let context, let key else { return .YES }
                    let collector = context.assumingMemoryBound(to: Collector.self)
                    let text = value.map { String(cString: $0) } ?? ""
                    guard collector.pointee.isHeader else {
                        let name = String(cString: key)
                        if collector.pointee.values[name] == nil { collector.pointee.values[name] = text }
                        return .YES
                    }
                    let name = String(cString: key).lowercased()
                    collector.pointee.values[name] = collector.pointee.values[name].map { $0 + ", " + text } ?? text
                    return .YES
                }, pointer)
        }
        return collector.values
    }

    private static func remoteAddress(_ connection: OpaquePointer) -> String? {
        // On the stack: an array for the text and another for its bytes were two allocations on every request.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            guard let base = buffer.baseAddress, wv_mhd_client_address(connection, base, buffer.count) == 0 else { return nil }
            return String(cString: base)
        }
    }
}

/// The body read so far for one request, owned by libmicrohttpd's per-request slot.
private final class UploadState: @unchecked Sendable {
    // @unchecked: only libmicrohttpd's thread for this connection touches the plain properties; a storage
    // worker touches only `offloadedResponse`, under its lock.
    /// Whether the request target as sent, before percent-decoding, holds `%00`.
    let targetHasEncodedNUL: Bool
    /// Whether the headers have been handed over (`begin` ran).
    private(set) var begun = false
    private(set) var method = ""
    private(set) var path = ""
    private(set) var limit = 0
    /// When the headers were handed over: the body's rate is measured from here.
    private(set) var bodyStarted = DispatchTime.now()
    var body = Data()
    /// Bytes of body seen, kept or not.
    var received = 0
    /// The body is over the limit: it is drained, not kept.
    var refused = false
    /// An answer is queued or being made; later upload calls only discard.
    var answered = false
    /// The answer was written while the body still arrived (`answerBeforeBodyEnd`); the connection ends with the body.
    var answeredEarly = false
    /// The answer is a file sent on a corked socket (`queue`), to be uncorked when the request completes.
    var corked = false
    /// The answer made by a storage worker, handed back when the connection resumes.
    let offloadedResponse = Mutex<HTTPResponse?>(nil)

    init(targetHasEncodedNUL: Bool) {
        self.targetHasEncodedNUL = targetHasEncodedNUL
    }

    func begin(method: String, path: String, limit: Int) {
        begun = true
        self.method = method
        self.path = path
        self.limit = limit
        bodyStarted = DispatchTime.now()
    }

    /// Whether the body, `received` bytes so far, has arrived slower on average than the minimum rate once the
    /// grace period is over.
    func isTooSlow(minimumBytesPerSecond: Int, graceSeconds: Double) -> Bool {
        guard minimumBytesPerSecond > 0 else { return false }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - bodyStarted.uptimeNanoseconds) / 1_000_000_000
        return seconds > graceSeconds && Double(received) < Double(minimumBytesPerSecond) * seconds
    }
}

/// Open connections and whether each is between answers, waiting for a header section, and since when; a thread
/// sweeps them and shuts down those whose headers are late.
///
/// libmicrohttpd's own timeout only measures silence, so a client sending a byte at a time keeps a connection for
/// ever. The socket is shut down, not closed: libmicrohttpd sees its read end and closes the connection itself,
/// and closes the descriptor only after it has told `closed`, which takes the same lock, so a descriptor reused
/// by a newer connection is never touched.
private final class ConnectionWatch: @unchecked Sendable {
    // @unchecked: `entries` is only touched under `lock`; `sweeper` only by start/stop, which are not concurrent.
    private struct Entry {
        var waitingSince: UInt64?
        var cut = false
    }
    private let lock = Mutex<[UInt: Entry]>([:])
    private let stopping = Atomic<Bool>(false)
    private var sweeper: Thread?
    private let sweeperDone = DispatchSemaphore(value: 0)
    /// Signalled to end the sweeper's wait between sweeps at once when it stops.
    private let wake = DispatchSemaphore(value: 0)

    func opened(_ connection: OpaquePointer) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock { $0[UInt(bitPattern: connection)] = Entry(waitingSince: now) }
    }

    func headersArrived(_ connection: OpaquePointer) {
        setWaitingSince(nil, for: connection)
    }

    func requestEnded(_ connection: OpaquePointer) {
        setWaitingSince(DispatchTime.now().uptimeNanoseconds, for: connection)
    }

    /// Read, changed and written back whole: `entries[key]?.waitingSince = x` goes through the dictionary's `_modify`
    /// accessor, whose coroutine frame was a `malloc` and a `free` on every call, twice per request.
    private func setWaitingSince(_ since: UInt64?, for connection: OpaquePointer) {
        let key = UInt(bitPattern: connection)
        lock.withLock { entries in
            guard var entry = entries[key] else { return }
            entry.waitingSince = since
            entries[key] = entry
        }
    }

    func closed(_ connection: OpaquePointer) {
        _ = lock.withLock { $0.removeValue(forKey: UInt(bitPattern: connection)) }
    }

    func startSweeping(headerTimeoutSeconds: Double) {
        guard headerTimeoutSeconds > 0, sweeper == nil else { return }
        stopping.store(false, ordering: .relaxed)
        let limit = UInt64(headerTimeoutSeconds * 1_000_000_000)
        // A quarter of the deadline, at most a second and at least 50 ms: late by at most that much.
        let interval = min(max(headerTimeoutSeconds / 4, 0.05), 1.0)
        let thread = Thread { [self] in
            while !stopping.load(ordering: .relaxed) {
                sweep(limit: limit)
                _ = wake.wait(timeout: .now() + interval)
            }
            sweeperDone.signal()
        }
        thread.name = "walletvault-header-deadline"
        sweeper = thread
        thread.start()
    }

    func stopSweeping() {
        guard sweeper != nil else { return }
        stopping.store(true, ordering: .relaxed)
        // A sleep here made every stop wait out the sweeper's interval: a whole second per server shut down.
        wake.signal()
        sweeperDone.wait()
        sweeper = nil
    }

    private func sweep(limit: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock { entries in
            for (key, entry) in entries {
                // `since` may be later than `now`: a request that ended after `now` was read set it on another
                // thread. `now - since` then trapped on the unsigned underflow and took the whole server down (seen
                // once in about twenty 20 000-user load runs, issue 19).
                guard !entry.cut, let since = entry.waitingSince, now > since, now - since > limit,
                    let connection = OpaquePointer(bitPattern: key)
                else { continue }
                entries[key]?.cut = true
                _ = wv_mhd_shutdown_connection(connection)
            }
        }
    }
}

/// Keeps a response body's bytes alive while libmicrohttpd sends them (`HTTPServer.nativeResponse`).
private final class ResponseBodyOwner {
    let body: Data

    init(_ body: Data) {
        self.body = body
    }
}

/// libmicrohttpd's free callback for a response over a `ResponseBodyOwner`'s bytes: called once, when the response is
/// destroyed.
private let releaseResponseBody: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<ResponseBodyOwner>.fromOpaque(context).release()
}

/// The body reader of a response whose body is never sent (a 304): the end at once, should libmicrohttpd ever ask.
private let noBodyReader: MHD_ContentReaderCallback = { _, _, _, _ in -1 }

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
    return server.handle(
        connection: connection, url: String(cString: url), method: String(cString: method), data: data, uploadSize: uploadSize,
        state: state)
}

private let httpServerURILogHandler:
    @convention(c) (
        UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?
    ) -> UnsafeMutableRawPointer? = { context, uri, _ in
        guard let context else { return nil }
        return Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().requestLineRead(uri: uri)
    }

private let httpServerConnectionHandler: MHD_NotifyConnectionCallback = { context, connection, _, code in
    guard let context else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
        .connection(connection, opened: code == .CONNECTION_NOTIFY_STARTED)
}

private let httpServerCompletedHandler: MHD_RequestCompletedCallback = { context, connection, state, _ in
    guard let context else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().completed(connection: connection, state: state)
}
