// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Owns one `ECDSA_SIG`, to convert between DER (what libcrypto signs and verifies) and fixed-width `r || s`.
    final class ECDSASig {
        private let signature: OpaquePointer

        /// Parses a strict DER `ECDSA-Sig-Value`: BER variants and trailing bytes are refused.
        init(derRepresentation der: some DataProtocol) throws {
            let bytes = Array(der)
            let parsed = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var input = buffer.baseAddress
                guard let parsed = d2i_ECDSA_SIG(nil, &input, buffer.count) else { return nil }
                guard input == buffer.baseAddress.map({ $0 + buffer.count }) else {
                    ECDSA_SIG_free(parsed)
                    return nil
                }
                return parsed
            }
            signature = try LibCrypto.nonNull(parsed, .invalidEncoding, "not a DER ECDSA signature")
            guard try derRepresentation() == Data(bytes) else {
                throw CryptoError(.invalidEncoding, "ECDSA signature is not in canonical DER")
            }
        }

        /// Builds a signature from big-endian `r` and `s`.
        init(r: some DataProtocol, s: some DataProtocol) throws {
            signature = try LibCrypto.nonNull(ECDSA_SIG_new(), .libraryFailure, "ECDSA_SIG_new failed")
            // ECDSA_SIG_set0 takes ownership of both numbers only when it succeeds.
            let rNumber = LibCrypto.withContiguousBytes(r) {
                BN_bin2bn($0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32($0.count), nil)
            }
            let sNumber = LibCrypto.withContiguousBytes(s) {
                BN_bin2bn($0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32($0.count), nil)
            }
            guard let rNumber, let sNumber, ECDSA_SIG_set0(signature, rNumber, sNumber) == 1 else {
                BN_free(rNumber)
                BN_free(sNumber)
                ERR_clear_error()
                throw CryptoError(.libraryFailure, "ECDSA_SIG_set0 failed")
            }
        }

        deinit {
            ECDSA_SIG_free(signature)
        }

        func derRepresentation() throws -> Data {
            let length = i2d_ECDSA_SIG(signature, nil)
            guard length > 0 else { throw CryptoError(.libraryFailure, "i2d_ECDSA_SIG failed") }
            var output = Data(count: Int(length))
            let written = output.withUnsafeMutableBytes { buffer -> Int32 in
                var cursor = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
                return i2d_ECDSA_SIG(signature, &cursor)
            }
            guard written == length else { throw CryptoError(.libraryFailure, "i2d_ECDSA_SIG failed") }
            return output
        }

        /// `r || s`, each left-padded to `coordinateByteCount`; throws if either does not fit.
        func rawRepresentation(coordinateByteCount: Int) throws -> Data {
            var output = Data(count: 2 * coordinateByteCount)
            let fits = output.withUnsafeMutableBytes { buffer -> Bool in
                let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let width = Int32(coordinateByteCount)
                return BN_bn2binpad(ECDSA_SIG_get0_r(signature), base, width) == width
                    && BN_bn2binpad(ECDSA_SIG_get0_s(signature), base + coordinateByteCount, width) == width
            }
            guard fits else { throw CryptoError(.invalidEncoding, "signature values are too large for the curve") }
            return output
        }
    }
#endif
