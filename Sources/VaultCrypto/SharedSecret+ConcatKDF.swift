import Foundation

#if !canImport(CryptoKit)
    import CLibCrypto
#endif

extension SharedSecret {
    /// Derives a symmetric key with the single-step Concat KDF (NIST SP 800-56C §4) over SHA-256, as JOSE's `ECDH-ES`
    /// uses it (RFC 7518 §4.6.2): `otherInfo` is the caller's AlgorithmID ‖ PartyUInfo ‖ PartyVInfo ‖ SuppPubInfo.
    ///
    /// CryptoKit has no Concat KDF: there it is the standard's hash loop over CryptoKit's SHA-256; on OpenSSL it is
    /// libcrypto's "SSKDF". Both are held to the same vectors (ConcatKDFTests).
    /// Throws `CryptoError` `.invalidParameter` unless `outputByteCount` is positive and below 2^16 blocks.
    public func concatDerivedSymmetricKey(
        using hashFunction: SHA256.Type, otherInfo: some DataProtocol,
        outputByteCount: Int
    ) throws -> SymmetricKey {
        guard outputByteCount > 0, outputByteCount <= 32 * 0xFFFF else {
            throw CryptoError(.invalidParameter, "Concat KDF output must be 1 to \(32 * 0xFFFF) bytes")
        }
        #if canImport(CryptoKit)
            // K(i) = H(counter ‖ Z ‖ OtherInfo) with a 32-bit big-endian counter from 1, concatenated and truncated.
            let info = Data(otherInfo)
            var output = Data(capacity: outputByteCount + 32)
            var counter: UInt32 = 1
            while output.count < outputByteCount {
                var hash = SHA256()
                Swift.withUnsafeBytes(of: counter.bigEndian) { hash.update(bufferPointer: $0) }
                withUnsafeBytes { hash.update(bufferPointer: $0) }
                hash.update(data: info)
                output.append(contentsOf: hash.finalize())
                counter += 1
            }
            defer { output.resetBytes(in: output.startIndex..<output.endIndex) }
            return SymmetricKey(data: output.prefix(outputByteCount))
        #else
            let context = try KDFContext(algorithm: "SSKDF")
            let digest: OpenSSLName = "SHA256"
            let output = try storage.withUnsafeBytes { secret in
                try LibCrypto.withContiguousBytes(otherInfo) { info in
                    // libcrypto only reads through these pointers; its API is not const-correct.
                    let parameters = [
                        OSSL_PARAM_construct_utf8_string(OpenSSLName.kdfDigest.cString, UnsafeMutablePointer(mutating: digest.cString), 0),
                        OSSL_PARAM_construct_octet_string(
                            OpenSSLName.kdfKey.cString, UnsafeMutableRawPointer(mutating: secret.baseAddress), secret.count),
                        OSSL_PARAM_construct_octet_string(
                            OpenSSLName.kdfInfo.cString, UnsafeMutableRawPointer(mutating: info.baseAddress), info.count),
                        OSSL_PARAM_construct_end(),
                    ]
                    return try context.derive(count: outputByteCount, parameters: parameters)
                }
            }
            return SymmetricKey(storage: output)
        #endif
    }
}
