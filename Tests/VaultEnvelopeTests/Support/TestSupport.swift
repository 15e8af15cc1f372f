import Foundation
import VaultCore
import VaultCrypto

@testable import VaultEnvelope

/// Shared fixtures: a fixed clock, sample contents, a scratch directory, blob surgery.
enum TestSupport {
    /// 2026-08-12T19:00:00.000Z, advancing one second per call so versions differ.
    static func clock(start: Int64 = 1_786_561_200_000) -> @Sendable () -> UTCTimestamp {
        let ticks = Counter()
        return { UTCTimestamp(millisecondsSinceEpoch: start + 1000 * ticks.next()) }
    }

    /// A thread-safe tick counter for the clock.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Int64 = 0
        func next() -> Int64 {
            lock.lock()
            defer { lock.unlock() }
            defer { value += 1 }
            return value
        }
    }

    /// A small vault document like the SDK's: keyed items as JSON.
    static let plaintext = Data(#"{"items":{"pid-1":{"type":"PID","issuer":"https://issuer.example"}}}"#.utf8)

    /// Argon2id at the floor, so passphrase tests take a fraction of a second.
    static let fastCosts = Argon2idCosts.floor

    /// A fresh directory under the system temporary directory.
    static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vault-envelope-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A sealer and an opener sharing one in-memory counter store.
    static func pair(hint: String? = "Test device", maxBlobBytes: Int = 1_048_576, threshold: UInt64 = 1 << 24)
        -> (VaultSealer, VaultOpener)
    {
        let store = InMemoryCounterStore()
        return (
            VaultSealer(counterStore: store, hint: hint, maxBlobBytes: maxBlobBytes, dekRotationThreshold: threshold, clock: clock()),
            VaultOpener(counterStore: store)
        )
    }

    /// Rewrites a blob through Foundation's JSON (other member order and escaping) after `edit`.
    static func edit(_ blob: Data, _ edit: (inout [String: Any]) throws -> Void) throws -> Data {
        var object = try JSONSerialization.jsonObject(with: blob) as! [String: Any]
        try edit(&object)
        return try JSONSerialization.data(withJSONObject: object)
    }

    /// The entries of a blob as Foundation objects.
    static func entries(_ object: [String: Any]) -> [[String: Any]] {
        object["wrappedDeks"] as! [[String: Any]]
    }
}

extension VaultEnvelopeErrorCode {
    /// Whether `error` is a `VaultEnvelopeError` with this code, for `#expect(throws:)`.
    func matches(_ error: any Error) -> Bool {
        (error as? VaultEnvelopeError)?.code == self
    }
}
