// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    /// The HMAC-based extract-and-expand key derivation function (RFC 5869), spelled `HKDF<SHA256>` as in CryptoKit.
    public enum HKDF<H: HashFunction>: Sendable {}

    extension HKDF where H == SHA256 {
        /// The longest output RFC 5869 allows: 255 blocks of the hash length.
        public static var maximumOutputByteCount: Int { 255 * SHA256.byteCount }

        /// Derives `outputByteCount` bytes from `inputKeyMaterial`, `salt` and `info` (extract, then expand).
        ///
        /// An empty salt is the RFC's default (a hash-length string of zeros).
        /// Throws `CryptoError` `.invalidParameter` unless `outputByteCount` is in `1...8160`.
        public static func deriveKey(
            inputKeyMaterial: SymmetricKey,
            salt: some DataProtocol,
            info: some DataProtocol,
            outputByteCount: Int
        ) throws -> SymmetricKey {
            guard (1...maximumOutputByteCount).contains(outputByteCount) else {
                throw CryptoError(.invalidParameter, "HKDF-SHA256 output is 1 to \(maximumOutputByteCount) bytes")
            }
            let context = try KDFContext(algorithm: "HKDF")
            let digest: OpenSSLName = "SHA256"
            let output = try inputKeyMaterial.withUnsafeBytes { ikm in
                try LibCrypto.withContiguousBytes(salt) { saltBytes in
                    try LibCrypto.withContiguousBytes(info) { infoBytes in
                        // libcrypto only reads through these pointers; its API is not const-correct.
                        var parameters = [
                            OSSL_PARAM_construct_utf8_string(
                                OpenSSLName.kdfDigest.cString, UnsafeMutablePointer(mutating: digest.cString), 0),
                            OSSL_PARAM_construct_octet_string(
                                OpenSSLName.kdfKey.cString, UnsafeMutableRawPointer(mutating: ikm.baseAddress), ikm.count),
                        ]
                        // RFC 5869 treats an empty salt or info like an absent one, so empty values are simply not passed.
                        if !saltBytes.isEmpty {
                            parameters.append(
                                OSSL_PARAM_construct_octet_string(
                                    OpenSSLName.kdfSalt.cString, UnsafeMutableRawPointer(mutating: saltBytes.baseAddress), saltBytes.count
                                ))
                        }
                        if !infoBytes.isEmpty {
                            parameters.append(
                                OSSL_PARAM_construct_octet_string(
                                    OpenSSLName.kdfInfo.cString, UnsafeMutableRawPointer(mutating: infoBytes.baseAddress), infoBytes.count
                                ))
                        }
                        parameters.append(OSSL_PARAM_construct_end())
                        return try context.derive(count: outputByteCount, parameters: parameters)
                    }
                }
            }
            return SymmetricKey(storage: output)
        }
    }
#endif
