// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import CVaultCryptoShims
    import Foundation

    /// Owns one `OSSL_ENCODER_CTX` that serialises a key.
    final class KeyEncoder {
        private let context: OpaquePointer
        private let part: EVPKey.Part

        init(key: EVPKey, part: EVPKey.Part, format: EVPKey.Format) throws {
            context = try LibCrypto.nonNull(
                OSSL_ENCODER_CTX_new_for_pkey(key.pointer, part.selection, format.name.cString, part.outputStructure.cString, nil),
                .libraryFailure, "OSSL_ENCODER_CTX_new_for_pkey failed"
            )
            self.part = part
            // Fully initialised here, so a throw runs deinit, which frees the context.
            guard OSSL_ENCODER_CTX_get_num_encoders(context) > 0 else {
                throw CryptoError(.unsupportedAlgorithm, "no encoder for this key")
            }
        }

        deinit {
            OSSL_ENCODER_CTX_free(context)
        }

        func encode() throws -> Data {
            var output: UnsafeMutablePointer<UInt8>?
            var length = 0
            try LibCrypto.check(OSSL_ENCODER_to_data(context, &output, &length), .libraryFailure, "key encoding failed")
            let bytes = try LibCrypto.nonNull(output, .libraryFailure, "key encoding returned nothing")
            defer {
                // Private key encodings are key material; wipe libcrypto's copy.
                if part == .privateKey { wv_openssl_clear_free(bytes, length) } else { wv_openssl_free(bytes) }
            }
            return Data(bytes: bytes, count: length)
        }
    }
#endif
