// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Owns one `BIGNUM`.
    final class BigNumber {
        let pointer: OpaquePointer

        /// Parses an unsigned big-endian integer.
        init(bigEndian bytes: some DataProtocol) throws {
            pointer = try LibCrypto.withContiguousBytes(bytes) { buffer in
                try LibCrypto.nonNull(
                    BN_bin2bn(buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(buffer.count), nil),
                    .libraryFailure, "BN_bin2bn failed"
                )
            }
        }

        /// Takes ownership of a `BIGNUM` that libcrypto allocated for the caller.
        init(taking pointer: OpaquePointer) {
            self.pointer = pointer
        }

        deinit {
            BN_clear_free(pointer)
        }

        var bitCount: Int { Int(BN_num_bits(pointer)) }

        /// The minimal unsigned big-endian encoding, left-padded with zeros to `length` bytes if given.
        func bigEndianBytes(paddedTo length: Int? = nil) throws -> Data {
            let minimal = (bitCount + 7) / 8
            let size = length ?? minimal
            guard minimal <= size else {
                throw CryptoError(.invalidEncoding, "integer does not fit in \(size) bytes")
            }
            var output = Data(count: size)
            let written = output.withUnsafeMutableBytes { buffer in
                BN_bn2binpad(pointer, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(size))
            }
            guard written == size else { throw CryptoError(.libraryFailure, "BN_bn2binpad failed") }
            return output
        }
    }
#endif
