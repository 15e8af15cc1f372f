// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Owns one `OSSL_DECODER_CTX` that parses a key of one type.
    final class KeyDecoder {
        private let context: OpaquePointer
        private let format: EVPKey.Format
        // OSSL_DECODER_CTX_new_for_pkey writes the decoded key through this pointer.
        private let result: UnsafeMutablePointer<OpaquePointer?>

        init(format: EVPKey.Format, part: EVPKey.Part, keyType: OpenSSLName) throws {
            result = .allocate(capacity: 1)
            result.initialize(to: nil)
            guard let context = OSSL_DECODER_CTX_new_for_pkey(result, format.name.cString, nil, keyType.cString, part.selection, nil, nil)
            else {
                result.deallocate()
                ERR_clear_error()
                throw CryptoError(.libraryFailure, "OSSL_DECODER_CTX_new_for_pkey failed")
            }
            self.context = context
            self.format = format
        }

        deinit {
            OSSL_DECODER_CTX_free(context)
            if let key = result.pointee { EVP_PKEY_free(key) }
            result.deallocate()
        }

        /// Decodes `bytes`; DER must be consumed exactly, PEM may carry surrounding text.
        func decode(_ bytes: some DataProtocol) throws -> EVPKey {
            guard OSSL_DECODER_CTX_get_num_decoders(context) > 0 else {
                throw CryptoError(.unsupportedAlgorithm, "no decoder for this key type")
            }
            try LibCrypto.withContiguousBytes(bytes) { buffer in
                var input = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
                var remaining = buffer.count
                try LibCrypto.check(
                    OSSL_DECODER_from_data(context, &input, &remaining), .invalidEncoding, "not a valid key encoding"
                )
                if format == .der, remaining != 0 {
                    throw CryptoError(.invalidEncoding, "trailing bytes after the DER key")
                }
            }
            let key = try LibCrypto.nonNull(result.pointee, .invalidEncoding, "not a valid key encoding")
            result.pointee = nil
            return EVPKey(taking: key)
        }
    }
#endif
