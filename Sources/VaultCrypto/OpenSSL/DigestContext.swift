// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Owns one `EVP_MD_CTX`: hashing and the hash-then-sign operations (`EVP_DigestSign*` / `EVP_DigestVerify*`).
    final class DigestContext {
        private let context: OpaquePointer

        /// SHA-256 fetched from the default provider once; never freed, it lives as long as the process. Handing
        /// `EVP_DigestSignInit`/`EVP_DigestVerifyInit` the legacy `EVP_sha256()` instead makes OpenSSL 3 fetch the
        /// implementation by name on every call (hash-table walks that showed in the D1 mint's profile).
        nonisolated(unsafe) private static let sha256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

        init() throws {
            context = try LibCrypto.nonNull(EVP_MD_CTX_new(), .libraryFailure, "EVP_MD_CTX_new failed")
        }

        deinit {
            EVP_MD_CTX_free(context)
        }

        /// Hashes `data` with `digest`, streaming each region so large inputs are not copied.
        func digest(_ data: some DataProtocol, using digest: OpaquePointer) throws -> Data {
            try LibCrypto.check(EVP_DigestInit_ex(context, digest, nil), .libraryFailure, "EVP_DigestInit_ex failed")
            try LibCrypto.forEachChunk(of: data) { pointer, length in
                try LibCrypto.check(EVP_DigestUpdate(context, pointer, Int(length)), .libraryFailure, "EVP_DigestUpdate failed")
            }
            var output = Data(count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            try output.withUnsafeMutableBytes { buffer in
                try LibCrypto.check(
                    EVP_DigestFinal_ex(context, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), &length),
                    .libraryFailure, "EVP_DigestFinal_ex failed"
                )
            }
            return output.prefix(Int(length))
        }

        /// Signs the SHA-256 hash of `data`; `configure` sets padding on the signing `EVP_PKEY_CTX`, which this context owns.
        func signSHA256(
            _ data: some DataProtocol,
            with key: EVPKey,
            configure: (OpaquePointer) throws -> Void = { _ in }
        ) throws -> Data {
            var keyContext: OpaquePointer?
            try LibCrypto.check(
                EVP_DigestSignInit(context, &keyContext, Self.sha256 ?? EVP_sha256(), nil, key.pointer),
                .libraryFailure, "EVP_DigestSignInit failed"
            )
            try configure(try LibCrypto.nonNull(keyContext, .libraryFailure, "no signing context"))
            try LibCrypto.forEachChunk(of: data) { pointer, length in
                try LibCrypto.check(EVP_DigestSignUpdate(context, pointer, Int(length)), .libraryFailure, "EVP_DigestSignUpdate failed")
            }
            var length = 0
            try LibCrypto.check(EVP_DigestSignFinal(context, nil, &length), .libraryFailure, "EVP_DigestSignFinal (size) failed")
            var signature = Data(count: length)
            try signature.withUnsafeMutableBytes { buffer in
                try LibCrypto.check(
                    EVP_DigestSignFinal(context, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), &length),
                    .libraryFailure, "EVP_DigestSignFinal failed"
                )
            }
            return signature.prefix(length)
        }

        /// Verifies `signature` over the SHA-256 hash of `data`; any failure, including a malformed signature, is `false`.
        func verifySHA256(
            _ signature: some DataProtocol,
            for data: some DataProtocol,
            with key: EVPKey,
            configure: (OpaquePointer) throws -> Void = { _ in }
        ) -> Bool {
            do {
                var keyContext: OpaquePointer?
                try LibCrypto.check(
                    EVP_DigestVerifyInit(context, &keyContext, Self.sha256 ?? EVP_sha256(), nil, key.pointer),
                    .libraryFailure, "EVP_DigestVerifyInit failed"
                )
                try configure(try LibCrypto.nonNull(keyContext, .libraryFailure, "no verification context"))
                try LibCrypto.forEachChunk(of: data) { pointer, length in
                    try LibCrypto.check(
                        EVP_DigestVerifyUpdate(context, pointer, Int(length)), .libraryFailure, "EVP_DigestVerifyUpdate failed")
                }
                let status = LibCrypto.withContiguousBytes(signature) { buffer in
                    EVP_DigestVerifyFinal(context, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count)
                }
                try LibCrypto.check(status, .invalidSignature, "signature does not verify")
                return true
            } catch {
                return false
            }
        }
    }
#endif
