import Foundation
import Synchronization
import VaultCore
import VaultHTTP
import VaultJSON
import VaultServer
import VaultStorage
import WalletVault

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The server application in process: assembled by `ServerBootstrap` from the configuration a `LiveServer` would be
/// started with, answering through the same `respond(to:)` the HTTP transport calls, on a clock the test moves.
///
/// No socket, no child process, no sleep. What only a socket shows (framing, slow clients, TLS, signals) stays in
/// the live suites.
public final class InProcessServer: WalletVaultAPI {

    /// The base URL SDK clients are given; requests to it never leave the process.
    public let baseURL = URL(string: "http://in-process.test")!
    /// The clock the service reads.
    public let clock: ManualClock
    /// The assembled service and its store.
    public let application: ServerBootstrap.Application
    /// The configuration it was assembled from (its SQLite file and pepper in a scratch directory).
    public let configuration: ServerConfiguration
    private let logLines = LogLines()
    private let storageKeys: StorageKeyDeriver

    /// The API.
    public var service: WalletVaultService { application.service }

    /// Assembles the server for `options`; by default 1 000 saves an hour, so SDK tests are not rate-limited.
    ///
    /// - Throws: what writing the configuration or `ServerBootstrap.assemble` throws.
    public init(_ options: TestServerOptions = TestServerOptions(savesPerHour: 1000), clock: ManualClock = ManualClock()) throws {
        // In the scratch directory, removed at exit: SDK objects keep the service (and its store) after this object goes.
        let directory = URL(fileURLWithPath: ScratchDirectory.path("server", suffix: "d"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = try ServerConfiguration.load(path: try options.writeConfiguration(in: directory).path)
        self.configuration = configuration
        self.clock = clock
        storageKeys = try StorageKeyDeriver(pepper: options.secrets.pepper)
        let lines = logLines
        application = try ServerBootstrap.assemble(
            configuration, clock: clock,
            logger: RequestLogger(enabled: true, sink: { lines.append($0) }))
    }

    /// Stores `blob` as the current version of `user`'s vault (a `TestIssuer.shared` subject of `oem-a`) as a lying
    /// server can: straight into its own database, past the API's checks (the writer proof among them).
    ///
    /// - Throws: what parsing `blob` or the store throws, `StoreError` if the store did not save it.
    public func storeAsTheServer(_ blob: Data, user: String) throws {
        let key = storageKeys.key(issuer: TestIssuer.shared.issuer, authorizedParty: "oem-a", subject: user)
        let header = try VaultShapeValidator().validate(try JSONParser(maxDepth: 64).parse(blob))
        let outcome = try application.store.save(
            SaveRequest(
                key: key, body: blob, header: header, precondition: .none, rateLimit: SlidingWindowRateLimit(limit: 1_000_000),
                now: clock.now(), proof: WriterProof { _, _ in true }))
        guard case .saved = outcome else { throw StoreError(.corrupt, "the server's own save was refused: \(outcome)") }
    }

    /// Every line the server logged so far: its request log, written before each answer is returned.
    public func log() -> String {
        logLines.text
    }

    /// A transport into this server for the SDK; a request `gate` is armed for waits there until the test releases it.
    public func transport(gate: RequestGate? = nil) -> any HTTPTransport {
        InProcessTransport(service: service, gate: gate)
    }

    public func perform(_ method: String, _ pathAndQuery: String, headers: [String: String], body: Data?) async throws -> APIReply {
        var request = URLRequest(method, pathAndQuery, relativeTo: baseURL, headers: headers)
        request.httpBody = body
        let (data, response) = try await transport().send(request)
        return APIReply(data, response)
    }
}

/// Hands each `URLRequest` to the service as the HTTP layer would, off the cooperative pool (saves block on a commit).
private struct InProcessTransport: HTTPTransport {
    let service: WalletVaultService
    let gate: RequestGate?

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        await gate?.pass(request)
        let url = request.url!.absoluteURL
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] where query[item.name] == nil { query[item.name] = item.value ?? "" }
        let incoming = HTTPRequest(
            method: request.httpMethod ?? "GET", path: url.path, query: query,
            headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody ?? Data(),
            remoteAddress: "127.0.0.1")
        let service = self.service
        guard service.mayHold(incoming) else {
            let response = await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: service.respond(to: incoming)) }
            }
            return Self.reply(response, url: url)
        }
        let decision = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: service.hold(incoming)) }
        }
        return Self.reply(await Self.answer(decision), url: url)
    }

    /// The answer to a request the service may hold: held here as the HTTP server holds it, until the service answers,
    /// the wait passes, or the caller's task is cancelled (a client gone).
    private static func answer(_ decision: HTTPHoldDecision) async -> HTTPResponse {
        let (seconds, fallback, begin): (Double, HTTPResponse, @Sendable (HeldRequest) -> Void)
        switch decision {
        case .answer(let response): return response
        case .hold(let wait, let answer, let start): (seconds, fallback, begin) = (wait, answer, start)
        }
        let (answers, sink) = AsyncStream<HTTPResponse>.makeStream()
        let held = HeldRequest(fallback: fallback, seconds: seconds) { response in
            sink.yield(response)
            sink.finish()
        }
        begin(held)
        let deadline = Task {
            try? await Task.sleep(for: .seconds(seconds))
            held.answerFallback()
        }
        defer { deadline.cancel() }
        return await withTaskCancellationHandler {
            var iterator = answers.makeAsyncIterator()
            return await iterator.next() ?? fallback
        } onCancel: {
            held.answerFallback()
        }
    }

    private static func reply(_ response: HTTPResponse, url: URL) -> (Data, HTTPURLResponse) {
        let headers = Dictionary(response.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        return (
            response.file.map(Self.bytes(of:)) ?? response.body,
            HTTPURLResponse(url: url, statusCode: response.status, httpVersion: "HTTP/1.1", headerFields: headers)!
        )
    }

    /// A file body's bytes, read as libmicrohttpd would send them (and its descriptor closed, as libmicrohttpd does).
    private static func bytes(of file: HTTPFileBody) -> Data {
        guard let descriptor = file.takeDescriptor() else { return Data() }
        defer { close(descriptor) }
        var bytes = Data(count: file.length)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, file.length, off_t(file.offset)) }
        return bytes.prefix(max(read, 0))
    }
}

/// The log lines an in-process server wrote.
private final class LogLines: Sendable {
    private let data = Mutex(Data())

    func append(_ line: Data) { data.withLock { $0.append(line) } }
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}
