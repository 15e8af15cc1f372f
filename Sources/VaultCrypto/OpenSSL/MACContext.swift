// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Owns one `EVP_MAC_CTX` for HMAC-SHA256, keyed once and copied for each message.
    ///
    /// Keying is most of what a short HMAC costs in OpenSSL 3 (fetching the MAC and the digest by name, hashing the
    /// padded key); a copy of a keyed context skips all of it, which is what lets one key MAC many messages cheaply.
    final class MACContext {
        private let context: OpaquePointer

        /// HMAC fetched from the default provider once; never freed, it lives as long as the process.
        nonisolated(unsafe) private static let hmac: OpaquePointer? = EVP_MAC_fetch(nil, "HMAC", nil)

        /// A context keyed with `key` for HMAC-SHA256.
        init(hmacSHA256Key key: UnsafeRawBufferPointer) throws {
            let mac = try LibCrypto.nonNull(Self.hmac, .unsupportedAlgorithm, "HMAC unavailable")
            context = try LibCrypto.nonNull(EVP_MAC_CTX_new(mac), .libraryFailure, "EVP_MAC_CTX_new failed")
            let digest: OpenSSLName = "SHA256"
            let parameters = [
                OSSL_PARAM_construct_utf8_string(OpenSSLName.macDigest.cString, UnsafeMutablePointer(mutating: digest.cString), 0),
                OSSL_PARAM_construct_end(),
            ]
            // A zero-length key still needs a non-NULL pointer, or OpenSSL leaves the context unkeyed.
            var placeholder: UInt8 = 0
            let status = withUnsafePointer(to: &placeholder) { fallback in
                EVP_MAC_init(context, key.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback, key.count, parameters)
            }
            try LibCrypto.check(status, .libraryFailure, "EVP_MAC_init failed")
        }

        private init(context: OpaquePointer) {
            self.context = context
        }

        deinit {
            EVP_MAC_CTX_free(context)
        }

        /// An independent context in the same state.
        func copy() throws -> MACContext {
            MACContext(context: try LibCrypto.nonNull(EVP_MAC_CTX_dup(context), .libraryFailure, "EVP_MAC_CTX_dup failed"))
        }

        /// Adds `data` to the message.
        func update(_ data: some DataProtocol) throws {
            try LibCrypto.forEachChunk(of: data) { pointer, length in
                try LibCrypto.check(EVP_MAC_update(context, pointer, Int(length)), .libraryFailure, "EVP_MAC_update failed")
            }
        }

        /// The 32-byte code of the message so far; the context is spent afterwards.
        func finish() throws -> Data {
            var code = Data(count: SHA256.byteCount)
            var length = 0
            try code.withUnsafeMutableBytes { output in
                try LibCrypto.check(
                    EVP_MAC_final(context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), &length, output.count),
                    .libraryFailure, "EVP_MAC_final failed"
                )
            }
            guard length == SHA256.byteCount else { throw CryptoError(.libraryFailure, "HMAC returned an unexpected length") }
            return code
        }
    }
#endif
