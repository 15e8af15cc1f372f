// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// The private-key logic shared by `P256.Signing.PrivateKey` and `P256.KeyAgreement.PrivateKey`.
    struct P256PrivateKeyImpl: Sendable {
        static let scalarByteCount = 32

        let key: EVPKey
        let publicKey: P256PublicKeyImpl

        init() throws {
            try self.init(
                validated: try EVPKey.generate("EC") { context in
                    try LibCrypto.check(
                        EVP_PKEY_CTX_set_group_name(context, "P-256"), .libraryFailure, "cannot select P-256"
                    )
                })
        }

        init(pemRepresentation: String) throws {
            try self.init(checking: try EVPKey.decode(Data(pemRepresentation.utf8), format: .pem, part: .privateKey, keyType: "EC"))
        }

        init(derRepresentation: some DataProtocol) throws {
            try self.init(checking: try EVPKey.decode(derRepresentation, format: .der, part: .privateKey, keyType: "EC"))
        }

        /// Imports a bare 32-byte scalar.
        ///
        /// OpenSSL 3.0's `EVP_PKEY_fromdata` does not derive the public point from a scalar, but its SEC 1 decoder does,
        /// so the scalar is framed as a SEC 1 `ECPrivateKey` (RFC 5915) naming P-256.
        init(rawRepresentation: some DataProtocol) throws {
            guard rawRepresentation.count == Self.scalarByteCount else {
                throw CryptoError(.invalidKeySize, "a P-256 private key is 32 bytes")
            }
            let prefix: [UInt8] = [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20]
            let curve: [UInt8] = [0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
            let sec1 = SecureBytes(count: prefix.count + Self.scalarByteCount + curve.count) { buffer in
                buffer.copyBytes(from: prefix)
                UnsafeMutableRawBufferPointer(rebasing: buffer[prefix.count...]).copyBytes(from: rawRepresentation)
                UnsafeMutableRawBufferPointer(rebasing: buffer[(prefix.count + Self.scalarByteCount)...]).copyBytes(from: curve)
            }
            self = try sec1.withUnsafeBytes { try P256PrivateKeyImpl(derRepresentation: $0) }
        }

        /// Checks the curve and runs libcrypto's pairwise and range checks on an imported key.
        private init(checking key: EVPKey) throws {
            guard key.isA("EC"), (try? key.groupName()) == "prime256v1" else {
                throw CryptoError(.invalidParameter, "not a P-256 key")
            }
            try key.validate(.privateKey)
            try self.init(validated: key)
        }

        private init(validated key: EVPKey) throws {
            self.key = key
            publicKey = try P256PublicKeyImpl(x963Representation: try key.encodedPublicKey())
        }

        var pemRepresentation: String {
            LibCrypto.mustSucceed { String(decoding: try key.encode(.privateKey, format: .pem), as: UTF8.self) }
        }

        var derRepresentation: Data {
            LibCrypto.mustSucceed { try key.encode(.privateKey, format: .der) }
        }

        var rawRepresentation: Data {
            LibCrypto.mustSucceed {
                try key.integerParameter(.privateKey, paddedTo: Self.scalarByteCount)
            }
        }
    }
#endif
