import Foundation
import Synchronization
import VaultCrypto

/// Random bytes for values that are published, drawn from `SecureRandom` a page at a time and handed out in
/// small pieces, each once.
///
/// libcrypto's `RAND_bytes` costs about 0.9 µs a call whatever the length (its DRBG takes a lock, asks the kernel
/// for the process id to notice a fork, and sets up its AES-CTR state), and 16 bytes of a 4 KiB draw cost 0.005 µs:
/// a session token's `jti` paid the whole call on every mint. The bytes are as random as `SecureRandom`'s; what a
/// page keeps until it is handed out lies in this process's memory, so the pool serves only values that are
/// published anyway (a token's `jti`), never key material. The server does not fork, which a DRBG's fork check
/// would guard against.
final class RandomBytePool: Sendable {
    /// Bytes drawn at a time.
    static let pageSize = 4096

    private struct Page {
        var bytes: [UInt8] = []
        var used = 0
    }

    private let page = Mutex(Page())

    /// `count` bytes no other call is given; `count` is at most `pageSize`.
    func bytes(count: Int) -> Data {
        precondition(count >= 0 && count <= Self.pageSize, "RandomBytePool hands out at most a page at a time")
        return page.withLock { page in
            if page.used + count > page.bytes.count {
                page.bytes = [UInt8](SecureRandom.bytes(count: Self.pageSize))
                page.used = 0
            }
            defer {
                // Handed out is forgotten: the bytes given are overwritten so no later call can see them.
                for index in page.used..<(page.used + count) { page.bytes[index] = 0 }
                page.used += count
            }
            return Data(page.bytes[page.used..<(page.used + count)])
        }
    }
}
