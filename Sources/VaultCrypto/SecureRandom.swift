import Foundation

#if !canImport(CryptoKit)
    import CLibCrypto
#endif

/// Cryptographically secure random bytes: OpenSSL's CSPRNG (`RAND_bytes`), or where CryptoKit exists the system
/// generator CryptoKit draws its keys from.
public enum SecureRandom {
    /// Returns `count` random bytes.
    ///
    /// Never throws; traps if `count` is negative or the generator fails (predictable bytes would be worse than a crash).
    public static func bytes(count: Int) -> Data {
        precondition(count >= 0, "count must not be negative")
        #if canImport(CryptoKit)
            guard count > 0 else { return Data() }
            // A fresh SymmetricKey is `count` bytes from the system CSPRNG; CryptoKit offers no other door to it.
            return SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Data($0) }
        #else
            var data = Data(count: count)
            data.withUnsafeMutableBytes { fill($0) }
            return data
        #endif
    }

    #if !canImport(CryptoKit)
        /// Fills `buffer` with random bytes, trapping if the generator fails.
        static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            LibCrypto.mustSucceed {
                var offset = 0
                while offset < buffer.count {
                    let length = min(buffer.count - offset, Int(Int32.max))
                    let start = buffer.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self)
                    try LibCrypto.check(RAND_bytes(start, Int32(length)), .libraryFailure, "RAND_bytes failed")
                    offset += length
                }
            }
        }
    #endif
}
