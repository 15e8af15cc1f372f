import Foundation
import Synchronization
import VaultCore
import VaultJOSE

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where an issuer's verification keys come from: a fixed set, or a JWKS URL cached and
/// refetched at most once a minute when a token names a `kid` the cache lacks.
public final class JWKSSource: Sendable {
    private enum Origin {
        case fixed(JSONWebKeySet)
        case remote(URL)
    }

    private struct Cache {
        var keys: JSONWebKeySet?
        /// When the last fetch was tried, nil before the first.
        var fetchedAt: Int64?
    }

    private let origin: Origin
    private let cache = Mutex(Cache())
    private let fetchLock = Mutex(())
    /// The least time between two fetches, in milliseconds.
    private let refetchInterval: Int64 = 60_000

    /// A source that never changes.
    public init(keys: JSONWebKeySet) {
        origin = .fixed(keys)
    }

    /// A source that fetches the JWKS at `url` on first use and when a new `kid` appears.
    public init(url: URL) {
        origin = .remote(url)
    }

    /// Reads a JWKS file once.
    ///
    /// - Throws: `ServerStartupError` naming the file.
    public static func file(_ path: String) throws(ServerStartupError) -> JWKSSource {
        guard let data = FileManager.default.contents(atPath: path) else { throw ServerStartupError("cannot read JWKS file \(path)") }
        do {
            return JWKSSource(keys: try JSONWebKeySet(json: data, allowSymmetric: false))
        } catch {
            throw ServerStartupError("JWKS file \(path): \(error)")
        }
    }

    /// The keys to verify a token with `keyID`, refetching if the cache lacks it and may refetch.
    ///
    /// - Throws: `AuthenticationFailure` when no keys can be had.
    public func keys(for keyID: String?, now: UTCTimestamp) throws(AuthenticationFailure) -> JSONWebKeySet {
        guard case .remote(let url) = origin else {
            if case .fixed(let keys) = origin { return keys }
            throw AuthenticationFailure("no keys")
        }
        let cached = cache.withLock { $0 }
        if let keys = cached.keys, keyID.map(keys.contains(keyID:)) ?? true { return keys }
        // One fetch at a time; callers that waited see the fresh cache.
        return try fetchLock.withLock { _ throws(AuthenticationFailure) -> JSONWebKeySet in
            let current = cache.withLock { $0 }
            if let keys = current.keys, keyID.map(keys.contains(keyID:)) ?? true { return keys }
            let mayFetch = current.fetchedAt.map { now.millisecondsSinceEpoch - $0 >= refetchInterval } ?? true
            guard mayFetch else {
                if let keys = current.keys { return keys }
                throw AuthenticationFailure("JWKS unavailable; next fetch allowed later")
            }
            let fetched = Self.fetch(url)
            cache.withLock { cache in
                cache.fetchedAt = now.millisecondsSinceEpoch
                if let fetched { cache.keys = fetched }
            }
            guard let keys = fetched ?? current.keys else { throw AuthenticationFailure("JWKS fetch failed") }
            return keys
        }
    }

    private static func fetch(_ url: URL) -> JSONWebKeySet? {
        final class Box: @unchecked Sendable { var data: Data? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        var request = URLRequest(url: url, timeoutInterval: 5)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        URLSession.shared.dataTask(with: request) { data, response, _ in
            if (response as? HTTPURLResponse)?.statusCode == 200, let data, data.count <= 1_048_576 { box.data = data }
            done.signal()
        }.resume()
        done.wait()
        return box.data.flatMap { try? JSONWebKeySet(json: $0, allowSymmetric: false) }
    }
}
