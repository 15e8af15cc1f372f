// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import Foundation

    /// A symmetric key whose bytes are wiped from memory when the last copy is released.
    public struct SymmetricKey: Sendable, Equatable, CustomStringConvertible {
        let storage: SecureBytes

        /// Generates a random key of the given size.
        ///
        /// Never throws; traps only if the system cannot provide random bytes.
        public init(size: SymmetricKeySize) {
            storage = SecureBytes(count: size.bitCount / 8) { SecureRandom.fill($0) }
        }

        /// Creates a key from a copy of `data`.
        public init<D: ContiguousBytes>(data: D) {
            storage = data.withUnsafeBytes { SecureBytes(copying: $0) }
        }

        init(storage: SecureBytes) {
            self.storage = storage
        }

        /// The key length in bits.
        public var bitCount: Int { storage.count * 8 }

        /// The key length in bytes.
        var byteCount: Int { storage.count }

        /// Calls `body` with the key bytes, which must not escape the closure.
        ///
        /// Rethrows what `body` throws.
        public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try storage.withUnsafeBytes(body)
        }

        /// Compares two keys in constant time.
        public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
            lhs.withUnsafeBytes { left in
                rhs.withUnsafeBytes { right in LibCrypto.constantTimeEquals(left, right) }
            }
        }

        /// The key size only; the bytes never appear in logs.
        public var description: String { "SymmetricKey(\(bitCount) bits)" }
    }
#endif
