import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one HTTP request; the SDK's only door to the network, replaceable in tests.
public protocol HTTPTransport: Sendable {
    /// Sends a request and returns the body and response.
    ///
    /// - Throws: `URLError` (or any transport error) when no HTTP answer arrives.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

/// The transport over URLSession.
public struct URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// Creates a transport over an ephemeral session that never caches vault bytes on disk.
    public init(timeoutSeconds: Double = 30) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeoutSeconds
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return (data, http)
    }
}
