// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Return-code checks and buffer plumbing shared by every wrapper around libcrypto.
    enum LibCrypto {
        /// Throws unless `status` is positive, libcrypto's success (1 for most calls, "> 0" for the ctrl-style ones).
        ///
        /// The thread's error queue is emptied on failure so that a stale entry is never reported by a later call.
        static func check(
            _ status: Int32,
            _ code: CryptoError.Code = .libraryFailure,
            _ reason: @autoclosure () -> String
        ) throws {
            guard status > 0 else {
                ERR_clear_error()
                throw CryptoError(code, reason())
            }
        }

        /// Returns `pointer`, or throws when libcrypto returned NULL.
        static func nonNull<T>(
            _ pointer: T?,
            _ code: CryptoError.Code = .libraryFailure,
            _ reason: @autoclosure () -> String
        ) throws -> T {
            guard let pointer else {
                ERR_clear_error()
                throw CryptoError(code, reason())
            }
            return pointer
        }

        /// Runs `body` for calls that can only fail when memory is exhausted, and traps if they do.
        ///
        /// This mirrors swift-crypto: a hash or MAC that silently returned garbage would be worse than a crash.
        static func mustSucceed<T>(_ body: () throws -> T) -> T {
            do {
                return try body()
            } catch {
                fatalError("libcrypto failed where only memory exhaustion can fail: \(error)")
            }
        }

        /// Runs `body` over `data` as one contiguous buffer whose base address is never nil.
        ///
        /// Several libcrypto calls reject NULL even with a zero length; non-contiguous input is copied
        /// into zeroed-on-release memory because it may be secret.
        static func withContiguousBytes<R>(
            _ data: some DataProtocol,
            _ body: (UnsafeRawBufferPointer) throws -> R
        ) rethrows -> R {
            if data.isEmpty {
                var placeholder: UInt8 = 0
                return try withUnsafeBytes(of: &placeholder) {
                    try body(UnsafeRawBufferPointer(start: $0.baseAddress, count: 0))
                }
            }
            if data.regions.count == 1, let region = data.regions.first {
                return try region.withUnsafeBytes(body)
            }
            return try SecureBytes(copying: data).withUnsafeBytes(body)
        }

        /// Calls `body` once per piece of `data`, in order, each piece small enough for libcrypto's `int` lengths.
        static func forEachChunk(
            of data: some DataProtocol,
            _ body: (UnsafePointer<UInt8>, Int32) throws -> Void
        ) rethrows {
            let chunkSize = 1 << 30
            for region in data.regions {
                try region.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
                    guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
                    var offset = 0
                    while offset < buffer.count {
                        let length = min(chunkSize, buffer.count - offset)
                        try body(base + offset, Int32(length))
                        offset += length
                    }
                }
            }
        }

        /// Compares in time that does not depend on where the bytes differ; only the lengths, which are public, short-cut.
        static func constantTimeEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
            guard lhs.count == rhs.count else { return false }
            guard let left = lhs.baseAddress, let right = rhs.baseAddress else { return lhs.count == 0 }
            return CRYPTO_memcmp(left, right, lhs.count) == 0
        }
    }
#endif
