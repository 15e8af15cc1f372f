// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// The public-key logic shared by `P256.Signing.PublicKey` and `P256.KeyAgreement.PublicKey`.
    struct P256PublicKeyImpl: Sendable {
        static let coordinateByteCount = 32

        let key: EVPKey

        /// Imports an uncompressed point `04 || X || Y` and validates it: on the curve, not the point at infinity,
        /// in the prime-order group. Compressed and hybrid encodings are refused.
        init(x963Representation bytes: some DataProtocol) throws {
            guard bytes.count == 1 + 2 * Self.coordinateByteCount, bytes.first == 0x04 else {
                throw CryptoError(.invalidPublicKey, "a P-256 public key is an uncompressed 65-byte point")
            }
            let builder = try ParamBuilder()
            try builder.push(.groupName, utf8: "P-256")
            try builder.push(.publicKey, octets: bytes)
            let key: EVPKey
            do {
                key = try EVPKey.fromParameters("EC", part: .publicKey, builder: builder)
            } catch {
                throw CryptoError(.invalidPublicKey, "point is not on P-256")
            }
            try key.validate(.publicKey)
            self.key = key
        }

        /// Imports `X || Y`, 64 bytes.
        init(rawRepresentation bytes: some DataProtocol) throws {
            guard bytes.count == 2 * Self.coordinateByteCount else {
                throw CryptoError(.invalidPublicKey, "a raw P-256 public key is 64 bytes")
            }
            try self.init(x963Representation: [0x04] + Array(bytes))
        }

        init(pemRepresentation: String) throws {
            try self.init(decoded: try EVPKey.decode(Data(pemRepresentation.utf8), format: .pem, part: .publicKey, keyType: "EC"))
        }

        init(derRepresentation: some DataProtocol) throws {
            try self.init(decoded: try EVPKey.decode(derRepresentation, format: .der, part: .publicKey, keyType: "EC"))
        }

        /// Re-imports the point of a decoded key so that every public key goes through the same validation.
        private init(decoded key: EVPKey) throws {
            guard key.isA("EC"), (try? key.groupName()) == "prime256v1" else {
                throw CryptoError(.invalidPublicKey, "not a P-256 key")
            }
            try self.init(x963Representation: try key.encodedPublicKey())
        }

        var x963Representation: Data {
            LibCrypto.mustSucceed { try key.encodedPublicKey() }
        }

        var rawRepresentation: Data { Data(x963Representation.dropFirst()) }

        var pemRepresentation: String {
            LibCrypto.mustSucceed { String(decoding: try key.encode(.publicKey, format: .pem), as: UTF8.self) }
        }

        var derRepresentation: Data {
            LibCrypto.mustSucceed { try key.encode(.publicKey, format: .der) }
        }
    }
#endif
