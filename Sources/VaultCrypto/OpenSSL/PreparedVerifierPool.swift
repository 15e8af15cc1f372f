// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation
    import Synchronization

    /// Verification contexts for one RSA key and one padding, prepared once and reused, as `openssl speed` does.
    ///
    /// `EVP_DigestVerifyInit` builds a fresh `EVP_PKEY_CTX` for every signature: it fetches the signature algorithm and
    /// the digest by name from the provider store (locks and hash-table walks), copies the key reference, and sets the
    /// padding through parameter lists; on the D1 mint that cost about a third as much as the RSA operation itself.
    /// A prepared context here has had `EVP_PKEY_verify_init`, the padding and SHA-256 as the signature digest set
    /// once; each verification hashes the input with a reused `EVP_MD_CTX` and calls `EVP_PKEY_verify` on the hash,
    /// the same check `EVP_DigestVerifyFinal` makes (PKCS #1 v1.5 `DigestInfo` or PSS over SHA-256).
    ///
    /// A caller takes a context for the length of one verification, so no context is ever used by two threads at once;
    /// one per thread that verifies at the same moment is created, at most `maximumIdle` per shard are kept. A context
    /// whose verification failed is freed rather than kept, so an error state can never carry over to the next signature.
    ///
    /// The idle contexts are kept in shards chosen by the calling thread, so each of the server's few worker threads in
    /// effect keeps its own: with one shared list, the workers' lock spinning cost 3% of the mint load's CPU.
    final class PreparedVerifierPool: Sendable {
        /// One prepared pair; owned by the pool while idle, by one caller while in use.
        private struct Prepared: @unchecked Sendable {
            // @unchecked: the pointers are only touched by the caller that took the pair out of the pool.
            let key: OpaquePointer
            let digest: OpaquePointer

            func free() {
                EVP_PKEY_CTX_free(key)
                EVP_MD_CTX_free(digest)
            }
        }

        /// More idle contexts than this in one shard are freed: as many threads seldom verify at once.
        static let maximumIdle = 8
        /// Shards of idle contexts, a power of two.
        static let shardCount = 16

        /// SHA-256 fetched from the default provider once; never freed, it lives as long as the process.
        nonisolated(unsafe) private static let sha256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

        /// One shard's idle contexts (a class: a `Mutex` cannot be an array element).
        private final class Shard: Sendable {
            let idle = Mutex<[Prepared]>([])
        }

        private let shards: [Shard]
        private let padding: RSA.Signing.Padding

        init(padding: RSA.Signing.Padding) {
            self.padding = padding
            shards = (0..<Self.shardCount).map { _ in Shard() }
        }

        deinit {
            for shard in shards {
                shard.idle.withLock { contexts in
                    for context in contexts { context.free() }
                    contexts.removeAll()
                }
            }
        }

        /// The calling thread's shard: `pthread_self` (the address of the thread's control block) mixed, so that threads
        /// whose blocks lie a stack size apart land in different shards.
        private var shard: Shard {
            let thread = UInt64(UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))))
            let mixed = (thread >> 12) &* 0x9E37_79B9_7F4A_7C15
            return shards[Int(truncatingIfNeeded: mixed >> 60) & (Self.shardCount - 1)]
        }

        /// Verifies `signature` over the SHA-256 hash of `data` with `key`, which must be the same key on every call;
        /// any failure, including a malformed signature, is `false`.
        func verifySHA256(_ signature: some DataProtocol, for data: some DataProtocol, with key: EVPKey) -> Bool {
            let shard = self.shard
            guard let prepared = shard.idle.withLock({ $0.popLast() }) ?? prepare(key) else { return false }
            let valid = check(signature, for: data, on: prepared)
            guard valid else {
                ERR_clear_error()
                prepared.free()
                return false
            }
            let kept = shard.idle.withLock { contexts -> Bool in
                guard contexts.count < Self.maximumIdle else { return false }
                contexts.append(prepared)
                return true
            }
            if !kept { prepared.free() }
            return true
        }

        private func check(_ signature: some DataProtocol, for data: some DataProtocol, on prepared: Prepared) -> Bool {
            guard let sha256 = Self.sha256, EVP_DigestInit_ex2(prepared.digest, sha256, nil) == 1 else { return false }
            var hashed = true
            LibCrypto.forEachChunk(of: data) { pointer, length in
                if hashed, EVP_DigestUpdate(prepared.digest, pointer, Int(length)) != 1 { hashed = false }
            }
            var hash = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            return withUnsafeMutableBytes(of: &hash) { buffer -> Bool in
                let output = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
                var length: UInt32 = 0
                guard hashed, EVP_DigestFinal_ex(prepared.digest, output, &length) == 1, Int(length) == buffer.count else {
                    return false
                }
                return LibCrypto.withContiguousBytes(signature) { bytes in
                    EVP_PKEY_verify(
                        prepared.key, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count,
                        output, Int(length)) == 1
                }
            }
        }

        /// A new context for `key`, ready for `EVP_PKEY_verify` with this pool's padding and SHA-256.
        private func prepare(_ key: EVPKey) -> Prepared? {
            guard let sha256 = Self.sha256, let digest = EVP_MD_CTX_new() else { return nil }
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
                EVP_MD_CTX_free(digest)
                ERR_clear_error()
                return nil
            }
            let prepared = Prepared(key: context, digest: digest)
            do {
                try LibCrypto.check(EVP_PKEY_verify_init(context), .libraryFailure, "EVP_PKEY_verify_init failed")
                try LibCrypto.check(EVP_PKEY_CTX_set_signature_md(context, sha256), .libraryFailure, "cannot select SHA-256")
                try padding.configure(context)
            } catch {
                prepared.free()
                return nil
            }
            return prepared
        }
    }
#endif
