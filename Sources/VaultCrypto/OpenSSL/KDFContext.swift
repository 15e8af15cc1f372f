// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Owns one fetched `EVP_KDF` and one `EVP_KDF_CTX` made from it.
    final class KDFContext {
        private let kdf: OpaquePointer
        private let context: OpaquePointer

        init(algorithm: OpenSSLName) throws {
            kdf = try LibCrypto.nonNull(EVP_KDF_fetch(nil, algorithm.cString, nil), .unsupportedAlgorithm, "KDF unavailable")
            guard let context = EVP_KDF_CTX_new(kdf) else {
                EVP_KDF_free(kdf)
                ERR_clear_error()
                throw CryptoError(.libraryFailure, "EVP_KDF_CTX_new failed")
            }
            self.context = context
        }

        deinit {
            EVP_KDF_CTX_free(context)
            EVP_KDF_free(kdf)
        }

        /// Derives `count` bytes; `parameters` must end with `OSSL_PARAM_construct_end()`.
        func derive(count: Int, parameters: [OSSL_PARAM]) throws -> SecureBytes {
            try SecureBytes(count: count) { output in
                try LibCrypto.check(
                    EVP_KDF_derive(context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), count, parameters),
                    .invalidParameter, "key derivation failed"
                )
            }
        }
    }
#endif
