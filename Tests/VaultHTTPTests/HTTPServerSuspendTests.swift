import Dispatch
import Foundation
import Testing

@testable import VaultHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Requests that wait on storage run with their connection suspended, so they never hold a worker thread.
@Suite("HTTP server: storage waits off the workers")
struct HTTPServerSuspendTests {
    /// POSTs wait until `release` is signalled; everything else answers at once.
    struct GatedResponder: HTTPResponder {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        func bodyLimit(method: String, path: String) -> Int { 1024 }
        func tooLargeResponse(method: String, path: String, limit: Int) -> HTTPResponse { HTTPResponse(status: 413) }
        func waitsOnStorage(_ request: HTTPRequest) -> Bool { request.method == "POST" }

        func respond(to request: HTTPRequest) -> HTTPResponse {
            if request.method == "POST" {
                entered.signal()
                release.wait()
                return HTTPResponse(status: 201, body: request.body)
            }
            return HTTPResponse(status: 200, body: Data("quick".utf8))
        }
    }

    /// Waits on a thread of its own: blocking a task's thread could starve the very task that signals.
    static func wait(for semaphore: DispatchSemaphore, seconds: Double) async -> DispatchTimeoutResult {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: semaphore.wait(timeout: .now() + seconds)) }.start()
        }
    }

    @Test func aWaitingSaveDoesNotStallTheOnlyWorker() async throws {
        let responder = GatedResponder()
        var options = HTTPServer.Options()
        options.port = 0
        options.threads = 1
        let server = HTTPServer(options: options, responder: responder)
        let port = try server.start()
        defer { server.stop() }
        // Runs before stop, so a failing run cannot leave the worker blocked and the test hanging.
        defer { responder.release.signal() }
        let base = URL(string: "http://127.0.0.1:\(port)/x")!
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 15
        let session = URLSession(configuration: configuration)

        var post = URLRequest(url: base)
        post.httpMethod = "POST"
        post.httpBody = Data("kept".utf8)
        async let saved = session.data(for: post)
        #expect(await Self.wait(for: responder.entered, seconds: 30) == .success, "the POST reached the responder")

        // The single worker thread is free: a GET is answered while the POST still waits.
        let (quick, quickResponse) = try await session.data(from: base)
        #expect((quickResponse as? HTTPURLResponse)?.statusCode == 200)
        #expect(quick == Data("quick".utf8))

        responder.release.signal()
        let (body, response) = try await saved
        #expect((response as? HTTPURLResponse)?.statusCode == 201)
        #expect(body == Data("kept".utf8))
    }
}
