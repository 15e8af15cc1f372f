import Dispatch
import Foundation
import Testing

@testable import VaultHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Bodies from `HTTPServer.sharedBodyMinimumBytes` up are sent from the response's own `Data`, not from a copy: what
/// arrives must still be those bytes exactly, whatever the size, many times over and on many connections at once.
@Suite("HTTP server: response bodies sent without a copy")
struct HTTPResponseBodyTests {
    /// Answers `GET /<n>` with `n` bytes of a pattern that differs at every offset and per size.
    struct SizedResponder: HTTPResponder {
        static func body(_ count: Int) -> Data {
            Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ count &+ $0 >> 9) })
        }

        func bodyLimit(method: String, path: String) -> Int { 1024 }
        func tooLargeResponse(method: String, path: String, limit: Int) -> HTTPResponse { HTTPResponse(status: 413) }
        func respond(to request: HTTPRequest) -> HTTPResponse {
            HTTPResponse(
                status: 200, headers: [("Content-Type", "application/octet-stream")],
                body: Self.body(Int(request.path.dropFirst()) ?? 0))
        }
    }

    static let sizes = [
        0, 1, 14, 15, HTTPServer.sharedBodyMinimumBytes - 1, HTTPServer.sharedBodyMinimumBytes,
        16_384, 65_536, 1_048_577,
    ]

    @Test func everySizeArrivesByteForByte() async throws {
        var options = HTTPServer.Options()
        options.port = 0
        let server = HTTPServer(options: options, responder: SizedResponder())
        let port = try server.start()
        defer { server.stop() }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        let session = URLSession(configuration: configuration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<4 {
                for size in Self.sizes {
                    group.addTask {
                        let (body, response) = try await session.data(from: URL(string: "http://127.0.0.1:\(port)/\(size)")!)
                        #expect((response as? HTTPURLResponse)?.statusCode == 200)
                        #expect(body == SizedResponder.body(size), "size \(size), round \(round)")
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
