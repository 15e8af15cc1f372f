import Foundation
import Testing

@testable import VaultHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// A server that could not make what it needs refuses to start rather than serve without it.
///
/// Runs with the timed suites, one test at a time (the Makefile's `TIMED_SUITES`): for a moment it leaves the whole
/// test process without a descriptor to open, which a test running beside it would meet as a failure of its own.
@Suite struct HTTPServerStartTests {
    struct AnsweringResponder: HTTPResponder {
        func bodyLimit(method: String, path: String) -> Int { 1024 }
        func tooLargeResponse(method: String, path: String, limit: Int) -> HTTPResponse { HTTPResponse(status: 413) }
        func respond(to request: HTTPRequest) -> HTTPResponse { HTTPResponse(status: 200) }
    }

    /// Made while the process can open no descriptor, the watch of held requests has no epoll set, and `start` throws
    /// instead of listening. Before, the server started, and the watch's thread found `epoll_wait` failing at once
    /// and spun a core for as long as the server ran.
    @Test func aServerWithoutTheEpollSetOfItsHeldRequestsRefusesToStart() throws {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        try #require(getrlimit(resource, &limit) == 0)
        var none = limit
        // A soft limit of 0: no descriptor number is below it, so every open, socket or epoll_create fails (EMFILE).
        none.rlim_cur = 0
        try #require(setrlimit(resource, &none) == 0)
        var options = HTTPServer.Options()
        options.port = 0
        let server = HTTPServer(options: options, responder: AnsweringResponder())
        let restored = setrlimit(resource, &limit)
        try #require(restored == 0, "the descriptor limit could not be restored")
        #expect(throws: HTTPServerStartError.self) { try server.start() }
    }
}
