import Foundation
import Synchronization
import VaultCore
import WalletVault

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A scripted server: answers each request with what `respond` returns, and records the requests.
final class MockTransport: HTTPTransport, Sendable {
    typealias Responder = @Sendable (URLRequest, Int) throws -> (Int, [String: String], Data)
    private let responder: Responder
    private let log = Mutex<[URLRequest]>([])

    init(_ responder: @escaping Responder) {
        self.responder = responder
    }

    var requests: [URLRequest] { log.withLock { $0 } }

    func count(path: String) -> Int {
        requests.filter { $0.url?.path.hasSuffix(path) == true }.count
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let index = log.withLock { log in
            log.append(request)
            return log.count
        }
        // Yield so concurrent callers really interleave.
        await Task.yield()
        let (status, headers, body) = try responder(request, index)
        return (body, HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!)
    }
}

/// A clock that moves only when told to, and records every sleep instead of sleeping.
final class ManualClock: WalletClock, Sendable {
    private let state = Mutex<(now: Int64, sleeps: [Double])>((1_800_000_000_000, []))

    func now() -> UTCTimestamp { UTCTimestamp(millisecondsSinceEpoch: state.withLock { $0.now }) }

    func advance(seconds: Double) {
        state.withLock { $0.now += Int64(seconds * 1000) }
    }

    var sleeps: [Double] { state.withLock { $0.sleeps } }

    func sleep(seconds: Double) async throws {
        try Task.checkCancellation()
        state.withLock {
            $0.sleeps.append(seconds)
            $0.now += Int64(seconds * 1000)
        }
    }
}

func jsonBody(_ object: [String: Any]) -> Data {
    try! JSONSerialization.data(withJSONObject: object)
}

let sessionAnswer = jsonBody(["access_token": "session-1", "token_type": "Bearer", "expires_in": 600, "aud": "wallet-backup"])
