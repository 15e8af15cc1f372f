// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Owns one `EVP_PKEY_CTX`: key generation, import from parameters, checks, ECDH and RSA encryption.
    final class PKeyContext {
        private let context: OpaquePointer

        /// A context for an algorithm, for generating or importing keys.
        init(algorithm: OpenSSLName) throws {
            context = try LibCrypto.nonNull(
                EVP_PKEY_CTX_new_from_name(nil, algorithm.cString, nil), .unsupportedAlgorithm, "algorithm is unavailable"
            )
        }

        /// A context for operations with `key`; it keeps its own reference to the key.
        init(key: EVPKey) throws {
            context = try LibCrypto.nonNull(
                EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil), .libraryFailure, "EVP_PKEY_CTX_new_from_pkey failed"
            )
        }

        deinit {
            EVP_PKEY_CTX_free(context)
        }

        func generate(configure: (OpaquePointer) throws -> Void) throws -> EVPKey {
            try LibCrypto.check(EVP_PKEY_keygen_init(context), .libraryFailure, "EVP_PKEY_keygen_init failed")
            try configure(context)
            var key: OpaquePointer?
            try LibCrypto.check(EVP_PKEY_generate(context, &key), .libraryFailure, "key generation failed")
            return EVPKey(taking: try LibCrypto.nonNull(key, .libraryFailure, "key generation returned no key"))
        }

        func fromData(_ parameters: UnsafeMutablePointer<OSSL_PARAM>, selection: Int32) throws -> EVPKey {
            try LibCrypto.check(EVP_PKEY_fromdata_init(context), .libraryFailure, "EVP_PKEY_fromdata_init failed")
            var key: OpaquePointer?
            try LibCrypto.check(
                EVP_PKEY_fromdata(context, &key, selection, parameters), .invalidEncoding, "key parameters are not valid"
            )
            return EVPKey(taking: try LibCrypto.nonNull(key, .libraryFailure, "EVP_PKEY_fromdata returned no key"))
        }

        func check(_ part: EVPKey.Part) throws {
            switch part {
            case .privateKey:
                try LibCrypto.check(EVP_PKEY_check(context), .invalidParameter, "private key failed validation")
            case .publicKey:
                try LibCrypto.check(EVP_PKEY_public_check(context), .invalidPublicKey, "public key failed validation")
            }
        }

        /// Derives the raw ECDH shared secret with `peer`, which libcrypto validates again before use.
        func deriveSharedSecret(with peer: EVPKey) throws -> SecureBytes {
            try LibCrypto.check(EVP_PKEY_derive_init(context), .libraryFailure, "EVP_PKEY_derive_init failed")
            try LibCrypto.check(
                EVP_PKEY_derive_set_peer_ex(context, peer.pointer, 1), .invalidPublicKey, "peer key is not usable"
            )
            var length = 0
            try LibCrypto.check(EVP_PKEY_derive(context, nil, &length), .libraryFailure, "EVP_PKEY_derive (size) failed")
            return try SecureBytes(count: length) { buffer in
                var written = length
                try LibCrypto.check(
                    EVP_PKEY_derive(context, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), &written),
                    .libraryFailure, "EVP_PKEY_derive failed"
                )
                guard written == length else { throw CryptoError(.libraryFailure, "shared secret has an unexpected size") }
            }
        }

        /// Public-key encryption; `configure` sets the padding after `EVP_PKEY_encrypt_init`.
        func encrypt(_ plaintext: some DataProtocol, configure: (OpaquePointer) throws -> Void) throws -> Data {
            try LibCrypto.check(EVP_PKEY_encrypt_init(context), .libraryFailure, "EVP_PKEY_encrypt_init failed")
            try configure(context)
            return try transform(
                plaintext, with: EVP_PKEY_encrypt, failure: CryptoError(.invalidParameter, "message cannot be encrypted with this key"))
        }

        /// Private-key decryption; `configure` sets the padding after `EVP_PKEY_decrypt_init`.
        ///
        /// Every decryption failure is the same `.authenticationFailure`, so callers cannot become padding oracles.
        func decrypt(_ ciphertext: some DataProtocol, configure: (OpaquePointer) throws -> Void) throws -> Data {
            try LibCrypto.check(EVP_PKEY_decrypt_init(context), .libraryFailure, "EVP_PKEY_decrypt_init failed")
            try configure(context)
            return try transform(ciphertext, with: EVP_PKEY_decrypt, failure: CryptoError(.authenticationFailure, "decryption failed"))
        }

        /// Runs `EVP_PKEY_encrypt` or `EVP_PKEY_decrypt`, which share one calling convention: size query, then output.
        private func transform(
            _ input: some DataProtocol,
            with operation: (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?, UnsafePointer<UInt8>?, Int) -> Int32,
            failure: CryptoError
        ) throws -> Data {
            try LibCrypto.withContiguousBytes(input) { inputBytes in
                let inputPointer = inputBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                var length = 0
                guard operation(context, nil, &length, inputPointer, inputBytes.count) > 0 else {
                    ERR_clear_error()
                    throw failure
                }
                var output = Data(count: length)
                let status = output.withUnsafeMutableBytes { buffer in
                    operation(context, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), &length, inputPointer, inputBytes.count)
                }
                guard status > 0 else {
                    ERR_clear_error()
                    throw failure
                }
                return output.prefix(length)
            }
        }
    }
#endif
