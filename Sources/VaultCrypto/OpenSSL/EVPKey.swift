// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import CVaultCryptoShims
    import Foundation

    /// Owns one `EVP_PKEY`: construction, import/export and inspection of asymmetric keys.
    ///
    /// `@unchecked Sendable`: the key is never modified after `init`, and OpenSSL 3 allows concurrent use of one
    /// `EVP_PKEY` as long as each operation has its own `EVP_PKEY_CTX` / `EVP_MD_CTX`, which every caller creates.
    final class EVPKey: @unchecked Sendable {
        /// Which half of a key an encoding or import covers.
        enum Part {
            case privateKey
            case publicKey

            /// `EVP_PKEY_KEYPAIR` / `EVP_PKEY_PUBLIC_KEY`, which are composite macros Swift does not import.
            var selection: Int32 {
                let publicSelection =
                    OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS
                    | OSSL_KEYMGMT_SELECT_PUBLIC_KEY
                switch self {
                case .privateKey: return publicSelection | OSSL_KEYMGMT_SELECT_PRIVATE_KEY
                case .publicKey: return publicSelection
                }
            }

            /// PKCS #8 for private keys and SubjectPublicKeyInfo for public keys, the formats CryptoKit emits.
            var outputStructure: OpenSSLName {
                switch self {
                case .privateKey: return "PrivateKeyInfo"
                case .publicKey: return "SubjectPublicKeyInfo"
                }
            }
        }

        /// A serialisation of a key.
        enum Format {
            case pem
            case der

            var name: OpenSSLName {
                switch self {
                case .pem: return "PEM"
                case .der: return "DER"
                }
            }
        }

        let pointer: OpaquePointer

        /// Takes ownership of `pointer`.
        init(taking pointer: OpaquePointer) {
            self.pointer = pointer
        }

        deinit {
            EVP_PKEY_free(pointer)
        }

        /// Generates a key of `algorithm` ("EC", "RSA"); `configure` sets curve or size on the key-generation context.
        static func generate(_ algorithm: OpenSSLName, configure: (OpaquePointer) throws -> Void) throws -> EVPKey {
            let context = try PKeyContext(algorithm: algorithm)
            return try context.generate(configure: configure)
        }

        /// Builds a key of `algorithm` from the parameters in `builder`.
        static func fromParameters(_ algorithm: OpenSSLName, part: Part, builder: ParamBuilder) throws -> EVPKey {
            let context = try PKeyContext(algorithm: algorithm)
            return try context.fromData(try builder.build(), selection: part.selection)
        }

        /// Parses a PEM or DER key of `keyType` ("EC", "RSA"); any structure OpenSSL knows for that type is accepted
        /// (PKCS #8, SEC 1, PKCS #1, SubjectPublicKeyInfo).
        static func decode(_ bytes: some DataProtocol, format: Format, part: Part, keyType: OpenSSLName) throws -> EVPKey {
            try KeyDecoder(format: format, part: part, keyType: keyType).decode(bytes)
        }

        /// Serialises the key: PKCS #8 for `.privateKey`, SubjectPublicKeyInfo for `.publicKey`.
        func encode(_ part: Part, format: Format) throws -> Data {
            try KeyEncoder(key: self, part: part, format: format).encode()
        }

        /// A copy holding only the public half, so that a public key never keeps private material alive.
        func publicKeyOnly(keyType: OpenSSLName) throws -> EVPKey {
            try EVPKey.decode(try encode(.publicKey, format: .der), format: .der, part: .publicKey, keyType: keyType)
        }

        /// The key size in bits (modulus size for RSA, field size for EC).
        var bitCount: Int { Int(EVP_PKEY_get_bits(pointer)) }

        /// Whether the key is of `algorithm` ("EC", "RSA").
        func isA(_ algorithm: OpenSSLName) -> Bool {
            EVP_PKEY_is_a(pointer, algorithm.cString) == 1
        }

        /// The curve name of an EC key, such as "prime256v1".
        func groupName() throws -> String {
            var buffer = [CChar](repeating: 0, count: 80)
            var length = 0
            try LibCrypto.check(
                EVP_PKEY_get_group_name(pointer, &buffer, buffer.count, &length),
                .invalidParameter, "key has no curve"
            )
            return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// An integer parameter (such as RSA "n" or "e") as unsigned big-endian bytes, minimal or left-padded.
        func integerParameter(_ name: OpenSSLName, paddedTo length: Int? = nil) throws -> Data {
            var number: OpaquePointer?
            try LibCrypto.check(
                EVP_PKEY_get_bn_param(pointer, name.cString, &number),
                .libraryFailure, "EVP_PKEY_get_bn_param failed"
            )
            return try BigNumber(taking: try LibCrypto.nonNull(number, .libraryFailure, "missing key parameter"))
                .bigEndianBytes(paddedTo: length)
        }

        /// The public key in its standard octet form (uncompressed X9.63 point for EC).
        func encodedPublicKey() throws -> Data {
            var output: UnsafeMutablePointer<UInt8>?
            let length = EVP_PKEY_get1_encoded_public_key(pointer, &output)
            let bytes = try LibCrypto.nonNull(output, .libraryFailure, "EVP_PKEY_get1_encoded_public_key failed")
            defer { wv_openssl_free(bytes) }
            return Data(bytes: bytes, count: length)
        }

        /// Runs libcrypto's full consistency check: pairwise for private keys, on-curve / exponent and modulus
        /// sanity for public keys.
        func validate(_ part: Part) throws {
            let context = try PKeyContext(key: self)
            try context.check(part)
        }
    }
#endif
