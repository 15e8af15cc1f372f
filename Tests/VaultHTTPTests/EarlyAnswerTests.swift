import Foundation
import Testing

@testable import VaultHTTP

/// The bytes of the 413 the server writes itself while a chunked body still arrives (issue 17, item 7).
@Suite struct EarlyAnswerTests {
    @Test func theAnswerIsOneCompleteHTTPMessageThatClosesItsConnection() {
        let body = Data(#"{"error":"blob_too_large","message":"too large"}"#.utf8)
        let response = HTTPResponse(status: 413, headers: [("Content-Type", "application/json")], body: body)
        // 2026-12-01T11:55:28Z
        let bytes = HTTPServer.wireBytes(of: response, now: 1_796_126_128)
        let expected =
            "HTTP/1.1 413 Content Too Large\r\nDate: Tue, 01 Dec 2026 11:55:28 GMT\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        #expect(bytes == Data(expected.utf8) + body)
    }

    @Test func framingFieldsAreWrittenOnceAndFieldsWithLineBreaksNotAtAll() {
        let response = HTTPResponse(
            status: 413,
            headers: [
                ("Content-Length", "999"), ("connection", "keep-alive"), ("X-Bad", "a\r\nInjected: yes"), ("Retry-After", "1"),
            ], body: Data("x".utf8))
        let text = String(decoding: HTTPServer.wireBytes(of: response, now: 0), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 413 Content Too Large\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nRetry-After: 1\r\n"))
        #expect(text.hasSuffix("Content-Length: 1\r\nConnection: close\r\n\r\nx"))
        #expect(!text.contains("999") && !text.contains("keep-alive") && !text.contains("Injected"))
    }
}
