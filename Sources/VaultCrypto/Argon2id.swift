// libargon2 backend, on Linux; Apple platforms have no Argon2id, so there the app supplies one (Argon2idDeriving).
#if canImport(CArgon2)
    import CArgon2
    import CVaultCryptoShims
    import Foundation

    /// Argon2id password hashing / key derivation (RFC 9106, version 0x13) via libargon2.
    public enum Argon2id {
        /// The Argon2 variants; only `id` is public API, the others exist for the RFC 9106 vectors.
        enum Variant {
            case d, i, id

            var type: argon2_type {
                switch self {
                case .d: return Argon2_d
                case .i: return Argon2_i
                case .id: return Argon2_id
                }
            }
        }

        /// Derives a key from a password with Argon2id.
        ///
        /// `secret` is RFC 9106's optional key K (a server-side pepper) and `associatedData` its X; both default to empty.
        /// Throws `CryptoError` `.invalidParameter` when libargon2 refuses the parameters (salt under 8 bytes, output under
        /// 4 bytes, fewer than 1 pass, memory under 8 KiB per lane, values beyond 32 bits) and `.libraryFailure` when it
        /// cannot allocate the memory or threads.
        public static func deriveKey(
            password: some DataProtocol,
            salt: some DataProtocol,
            iterations: Int,
            memoryKiB: Int,
            parallelism: Int,
            outputByteCount: Int,
            secret: Data? = nil,
            associatedData: Data? = nil
        ) throws -> SymmetricKey {
            try derive(
                .id, password: password, salt: salt, iterations: iterations, memoryKiB: memoryKiB, parallelism: parallelism,
                outputByteCount: outputByteCount, secret: secret ?? Data(), associatedData: associatedData ?? Data()
            )
        }

        static func derive(
            _ variant: Variant,
            password: some DataProtocol,
            salt: some DataProtocol,
            iterations: Int,
            memoryKiB: Int,
            parallelism: Int,
            outputByteCount: Int,
            secret: some DataProtocol,
            associatedData: some DataProtocol
        ) throws -> SymmetricKey {
            guard let passes = UInt32(exactly: iterations), let memory = UInt32(exactly: memoryKiB),
                let lanes = UInt32(exactly: parallelism), let outputLength = UInt32(exactly: outputByteCount),
                outputByteCount > 0
            else {
                throw CryptoError(.invalidParameter, "Argon2 parameters must be positive 32-bit values")
            }
            let output = try SecureBytes(count: outputByteCount) { out in
                try LibCrypto.withContiguousBytes(password) { pwd in
                    try LibCrypto.withContiguousBytes(salt) { saltBytes in
                        try LibCrypto.withContiguousBytes(secret) { secretBytes in
                            try LibCrypto.withContiguousBytes(associatedData) { ad in
                                // libargon2 only writes to pwd/secret with the CLEAR flags, which are not set here.
                                var context = argon2_context(
                                    out: out.baseAddress?.assumingMemoryBound(to: UInt8.self), outlen: outputLength,
                                    pwd: mutableBytes(pwd), pwdlen: try length(pwd),
                                    salt: mutableBytes(saltBytes), saltlen: try length(saltBytes),
                                    secret: mutableBytes(secretBytes), secretlen: try length(secretBytes),
                                    ad: mutableBytes(ad), adlen: try length(ad),
                                    t_cost: passes, m_cost: memory, lanes: lanes, threads: lanes,
                                    version: UInt32(ARGON2_VERSION_13.rawValue),
                                    allocate_cbk: wv_argon2_allocate, free_cbk: wv_argon2_free,
                                    flags: 0
                                )
                                let status = argon2_ctx(&context, variant.type)
                                guard status == ARGON2_OK.rawValue else {
                                    let message = String(cString: argon2_error_message(status))
                                    let code: CryptoError.Code =
                                        status == ARGON2_MEMORY_ALLOCATION_ERROR.rawValue
                                            || status == ARGON2_THREAD_FAIL.rawValue ? .libraryFailure : .invalidParameter
                                    throw CryptoError(code, "Argon2: \(message)")
                                }
                            }
                        }
                    }
                }
            }
            return SymmetricKey(storage: output)
        }

        private static func mutableBytes(_ buffer: UnsafeRawBufferPointer) -> UnsafeMutablePointer<UInt8>? {
            UnsafeMutablePointer(mutating: buffer.baseAddress?.assumingMemoryBound(to: UInt8.self))
        }

        private static func length(_ buffer: UnsafeRawBufferPointer) throws -> UInt32 {
            guard let length = UInt32(exactly: buffer.count) else {
                throw CryptoError(.invalidParameter, "Argon2 inputs are limited to 4 GiB")
            }
            return length
        }
    }
    /// libargon2's Argon2id as the `Argon2idDeriving` a passphrase key takes (the default on Linux).
    public struct LibArgon2id: Argon2idDeriving {
        /// Creates the implementation; it holds no state.
        public init() {}

        /// Derives with `Argon2id.deriveKey`.
        ///
        /// - Throws: `CryptoError` as `Argon2id.deriveKey` does.
        public func deriveKey(password: Data, salt: Data, iterations: Int, memoryKiB: Int, parallelism: Int, outputByteCount: Int) throws
            -> SymmetricKey
        {
            try Argon2id.deriveKey(
                password: password, salt: salt, iterations: iterations, memoryKiB: memoryKiB, parallelism: parallelism,
                outputByteCount: outputByteCount)
        }
    }
#endif
