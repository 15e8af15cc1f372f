// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    /// The size of a symmetric key, in bits.
    public struct SymmetricKeySize: Sendable, Hashable {
        /// A 128-bit key size.
        public static let bits128 = SymmetricKeySize(bitCount: 128)
        /// A 192-bit key size.
        public static let bits192 = SymmetricKeySize(bitCount: 192)
        /// A 256-bit key size.
        public static let bits256 = SymmetricKeySize(bitCount: 256)

        /// The number of bits.
        public let bitCount: Int

        /// Creates a size from a positive multiple of 8 bits.
        ///
        /// Never throws; traps on a size that is not a positive multiple of 8, a programming error (as in CryptoKit).
        public init(bitCount: Int) {
            precondition(bitCount > 0 && bitCount % 8 == 0, "key sizes are positive multiples of 8 bits")
            self.bitCount = bitCount
        }
    }
#endif
