// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// Owns one `OSSL_PARAM_BLD` and the `OSSL_PARAM` array it builds, plus every value it points into.
    final class ParamBuilder {
        private let builder: OpaquePointer
        private var parameters: UnsafeMutablePointer<OSSL_PARAM>?
        // OSSL_PARAM_BLD keeps pointers to pushed values until `build`; these keep them alive.
        private var bigNumbers: [BigNumber] = []
        private var octetStrings: [SecureBytes] = []

        init() throws {
            builder = try LibCrypto.nonNull(OSSL_PARAM_BLD_new(), .libraryFailure, "OSSL_PARAM_BLD_new failed")
        }

        deinit {
            OSSL_PARAM_free(parameters)
            OSSL_PARAM_BLD_free(builder)
        }

        /// Adds a UTF-8 string whose storage outlives the builder.
        func push(_ name: OpenSSLName, utf8 value: StaticString) throws {
            let pointer = UnsafeRawPointer(value.utf8Start).assumingMemoryBound(to: CChar.self)
            try LibCrypto.check(
                OSSL_PARAM_BLD_push_utf8_string(builder, name.cString, pointer, 0),
                .libraryFailure, "OSSL_PARAM_BLD_push_utf8_string failed"
            )
        }

        /// Adds an unsigned integer given in big-endian bytes.
        func push(_ name: OpenSSLName, bigEndianInteger bytes: some DataProtocol) throws {
            let number = try BigNumber(bigEndian: bytes)
            bigNumbers.append(number)
            try LibCrypto.check(
                OSSL_PARAM_BLD_push_BN(builder, name.cString, number.pointer),
                .libraryFailure, "OSSL_PARAM_BLD_push_BN failed"
            )
        }

        /// Adds an octet string.
        func push(_ name: OpenSSLName, octets bytes: some DataProtocol) throws {
            let copy = SecureBytes(copying: bytes)
            octetStrings.append(copy)
            try copy.withUnsafeBytes { buffer in
                try LibCrypto.check(
                    OSSL_PARAM_BLD_push_octet_string(builder, name.cString, buffer.baseAddress, buffer.count),
                    .libraryFailure, "OSSL_PARAM_BLD_push_octet_string failed"
                )
            }
        }

        /// The finished array, owned by (and valid as long as) this builder.
        func build() throws -> UnsafeMutablePointer<OSSL_PARAM> {
            OSSL_PARAM_free(parameters)
            parameters = try LibCrypto.nonNull(OSSL_PARAM_BLD_to_param(builder), .libraryFailure, "OSSL_PARAM_BLD_to_param failed")
            return parameters!
        }
    }
#endif
