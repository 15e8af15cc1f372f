// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// SHA-256 (FIPS 180-4).
    public enum SHA256: HashFunction {
        /// The digest length, 32 bytes.
        public static let byteCount = 32

        /// Returns the 32-byte digest of `data`.
        ///
        /// Never throws; traps only if libcrypto cannot allocate memory.
        public static func hash<D: DataProtocol>(data: D) -> Data {
            LibCrypto.mustSucceed { try DigestContext().digest(data, using: algorithm) }
        }

        /// Hands `body` the 32-byte digest of `bytes`, computed in one call and held on the stack: for hashing on
        /// every request, where a `Data` for the input and one for the output cost more than the hash.
        ///
        /// Never throws; traps only if libcrypto fails.
        public static func withDigest<R>(of bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
            var digest: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            return withUnsafeMutableBytes(of: &digest) { output in
                var length: UInt32 = 0
                let hashed = EVP_Digest(
                    bytes.baseAddress, bytes.count, output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    &length, algorithm, nil)
                precondition(hashed == 1 && length == 32, "EVP_Digest(SHA-256) failed")
                return body(UnsafeRawBufferPointer(output))
            }
        }

        /// SHA-256 fetched from the default provider once: `EVP_sha256()` makes OpenSSL 3 look the algorithm up again
        /// on every digest, a cost that showed in load throughput once every backup request hashed its token
        /// (`walletvault-bench sha256`). Never freed: it lives as long as the process.
        nonisolated(unsafe) private static let algorithm: OpaquePointer = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()
    }
#endif
