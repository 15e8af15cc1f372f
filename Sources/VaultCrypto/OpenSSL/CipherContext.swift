// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Owns one `EVP_CIPHER_CTX`: AES-GCM and AES key wrap.
    final class CipherContext {
        /// The AES constructions used, each available for 128-, 192- and 256-bit keys.
        enum Mode {
            case gcm
            case keyWrap
            case keyWrapWithPadding

            func cipher(keyByteCount: Int) throws -> OpaquePointer {
                let cipher: OpaquePointer?
                switch (self, keyByteCount) {
                case (.gcm, 16): cipher = Self.aes128GCM
                case (.gcm, 24): cipher = Self.aes192GCM
                case (.gcm, 32): cipher = Self.aes256GCM
                case (.keyWrap, 16): cipher = Self.aes128Wrap
                case (.keyWrap, 24): cipher = Self.aes192Wrap
                case (.keyWrap, 32): cipher = Self.aes256Wrap
                case (.keyWrapWithPadding, 16): cipher = Self.aes128WrapPad
                case (.keyWrapWithPadding, 24): cipher = Self.aes192WrapPad
                case (.keyWrapWithPadding, 32): cipher = Self.aes256WrapPad
                default: throw CryptoError(.invalidKeySize, "AES keys are 128, 192 or 256 bits")
                }
                return try LibCrypto.nonNull(cipher, .unsupportedAlgorithm, "AES cipher unavailable")
            }

            // Fetched from the default provider once: `EVP_aes_256_gcm()` and its kin make OpenSSL 3 look the
            // algorithm up again on every initialization, most of what wrapping a key or opening a small box costs.
            // Never freed: they live as long as the process.
            nonisolated(unsafe) private static let aes128GCM = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil)
            nonisolated(unsafe) private static let aes192GCM = EVP_CIPHER_fetch(nil, "AES-192-GCM", nil)
            nonisolated(unsafe) private static let aes256GCM = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)
            nonisolated(unsafe) private static let aes128Wrap = EVP_CIPHER_fetch(nil, "AES-128-WRAP", nil)
            nonisolated(unsafe) private static let aes192Wrap = EVP_CIPHER_fetch(nil, "AES-192-WRAP", nil)
            nonisolated(unsafe) private static let aes256Wrap = EVP_CIPHER_fetch(nil, "AES-256-WRAP", nil)
            nonisolated(unsafe) private static let aes128WrapPad = EVP_CIPHER_fetch(nil, "AES-128-WRAP-PAD", nil)
            nonisolated(unsafe) private static let aes192WrapPad = EVP_CIPHER_fetch(nil, "AES-192-WRAP-PAD", nil)
            nonisolated(unsafe) private static let aes256WrapPad = EVP_CIPHER_fetch(nil, "AES-256-WRAP-PAD", nil)
        }

        private let context: OpaquePointer

        init() throws {
            context = try LibCrypto.nonNull(EVP_CIPHER_CTX_new(), .libraryFailure, "EVP_CIPHER_CTX_new failed")
        }

        deinit {
            EVP_CIPHER_CTX_free(context)
        }

        /// AES-GCM encryption; returns the ciphertext and the 16-byte tag.
        func sealGCM(
            key: SymmetricKey, nonce: some DataProtocol, plaintext: some DataProtocol, authenticating aad: some DataProtocol
        ) throws -> (ciphertext: Data, tag: Data) {
            try startGCM(key: key, nonce: nonce, encrypt: true)
            try feedAuthenticatedData(aad)
            let ciphertext = try process(plaintext, finalFailure: CryptoError(.libraryFailure, "EVP_CipherFinal_ex failed"))
            var tag = Data(count: AES.GCM.SealedBox.tagByteCount)
            try tag.withUnsafeMutableBytes { buffer in
                try LibCrypto.check(
                    EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(buffer.count), buffer.baseAddress),
                    .libraryFailure, "cannot read the GCM tag"
                )
            }
            return (ciphertext, tag)
        }

        /// AES-GCM decryption; releases no plaintext unless the tag verifies.
        func openGCM(
            key: SymmetricKey, nonce: some DataProtocol, ciphertext: some DataProtocol, tag: some DataProtocol,
            authenticating aad: some DataProtocol
        ) throws -> Data {
            try startGCM(key: key, nonce: nonce, encrypt: false)
            try feedAuthenticatedData(aad)
            var tagBytes = Array(tag)
            try LibCrypto.check(
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagBytes.count), &tagBytes),
                .authenticationFailure, "invalid GCM tag"
            )
            return try process(ciphertext, finalFailure: CryptoError(.authenticationFailure, "authentication failed"))
        }

        /// RFC 3394 / RFC 5649 wrapping (`encrypt`) or unwrapping, with OpenSSL's default integrity check values.
        func wrap(_ input: some DataProtocol, mode: Mode, key: SymmetricKey, encrypt: Bool) throws -> SecureBytes {
            let cipher = try mode.cipher(keyByteCount: key.byteCount)
            // The wrap ciphers are disabled in EVP unless the caller opts in.
            EVP_CIPHER_CTX_set_flags(context, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW)
            try key.withUnsafeBytes { keyBytes in
                try LibCrypto.check(
                    EVP_CipherInit_ex(
                        context, cipher, nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, encrypt ? 1 : 0),
                    .libraryFailure, "EVP_CipherInit_ex failed"
                )
            }
            // Unwrapped output is key material, so it never passes through an unwiped buffer.
            let failure: CryptoError =
                encrypt
                ? CryptoError(.invalidParameter, "input cannot be wrapped")
                : CryptoError(.authenticationFailure, "wrapped key failed its integrity check")
            var written = 0
            let buffer = try SecureBytes(count: input.count + 16) { output in
                let outputBase = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                // The wrap ciphers require the whole input in a single update.
                try LibCrypto.withContiguousBytes(input) { inputBytes in
                    var length: Int32 = 0
                    guard
                        EVP_CipherUpdate(
                            context, outputBase, &length, inputBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            Int32(inputBytes.count)) > 0
                    else {
                        ERR_clear_error()
                        throw failure
                    }
                    written = Int(length)
                }
                var finalLength: Int32 = 0
                guard EVP_CipherFinal_ex(context, outputBase + written, &finalLength) > 0 else {
                    ERR_clear_error()
                    throw failure
                }
                written += Int(finalLength)
            }
            return buffer.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<written])) }
        }

        private func startGCM(key: SymmetricKey, nonce: some DataProtocol, encrypt: Bool) throws {
            let cipher = try Mode.gcm.cipher(keyByteCount: key.byteCount)
            let operation: Int32 = encrypt ? 1 : 0
            try LibCrypto.check(EVP_CipherInit_ex(context, cipher, nil, nil, nil, operation), .libraryFailure, "EVP_CipherInit_ex failed")
            try LibCrypto.check(
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil),
                .invalidParameter, "unsupported GCM nonce length"
            )
            try key.withUnsafeBytes { keyBytes in
                try LibCrypto.withContiguousBytes(nonce) { nonceBytes in
                    try LibCrypto.check(
                        EVP_CipherInit_ex(
                            context, nil, nil,
                            keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            nonceBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            operation
                        ),
                        .libraryFailure, "EVP_CipherInit_ex failed"
                    )
                }
            }
        }

        private func feedAuthenticatedData(_ aad: some DataProtocol) throws {
            try LibCrypto.forEachChunk(of: aad) { pointer, length in
                var ignored: Int32 = 0
                try LibCrypto.check(
                    EVP_CipherUpdate(context, nil, &ignored, pointer, length), .libraryFailure, "EVP_CipherUpdate (AAD) failed")
            }
        }

        /// Streams `input` through the cipher and finishes it; a failing final step (a GCM tag mismatch) wipes the output.
        private func process(_ input: some DataProtocol, finalFailure: CryptoError) throws -> Data {
            // Uninitialized memory handed to Data as is: Data(count:) would first zero a megabyte-sized vault.
            let capacity = input.count + 16
            let base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16).assumingMemoryBound(to: UInt8.self)
            var written = 0
            do {
                try LibCrypto.forEachChunk(of: input) { pointer, length in
                    var produced: Int32 = 0
                    try LibCrypto.check(
                        EVP_CipherUpdate(context, base + written, &produced, pointer, length), .libraryFailure, "EVP_CipherUpdate failed")
                    written += Int(produced)
                }
                var produced: Int32 = 0
                guard EVP_CipherFinal_ex(context, base + written, &produced) > 0 else {
                    ERR_clear_error()
                    throw finalFailure
                }
                written += Int(produced)
            } catch {
                OPENSSL_cleanse(base, capacity)
                base.deallocate()
                throw error
            }
            return Data(bytesNoCopy: base, count: written, deallocator: .custom { memory, _ in memory.deallocate() })
        }
    }
#endif
