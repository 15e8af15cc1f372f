import CLibCrypto
import Foundation

/// The raw output of a key agreement; feed it to a KDF rather than using it as a key.
public struct SharedSecret: Sendable, CustomStringConvertible {
    let storage: SecureBytes

    /// Calls `body` with the secret bytes (for tests); they must not escape the closure.
    ///
    /// Rethrows what `body` throws.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes(body)
    }

    /// Derives a symmetric key with HKDF-SHA256, using the secret as input key material.
    ///
    /// Throws `CryptoError` `.invalidParameter` unless `outputByteCount` is in `1...8160`.
    public func hkdfDerivedSymmetricKey(
        using hashFunction: SHA256.Type,
        salt: some DataProtocol,
        sharedInfo: some DataProtocol,
        outputByteCount: Int
    ) throws -> SymmetricKey {
        try HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(storage: storage), salt: salt, info: sharedInfo, outputByteCount: outputByteCount
        )
    }

    /// Derives a symmetric key with the single-step Concat KDF (NIST SP 800-56C §4, OpenSSL's "SSKDF")
    /// over SHA-256, as JOSE's `ECDH-ES` uses it (RFC 7518 §4.6.2): `otherInfo` is the caller's
    /// AlgorithmID ‖ PartyUInfo ‖ PartyVInfo ‖ SuppPubInfo.
    ///
    /// Throws `CryptoError` `.invalidParameter` when OpenSSL refuses the length.
    public func concatDerivedSymmetricKey(using hashFunction: SHA256.Type, otherInfo: some DataProtocol,
                                          outputByteCount: Int) throws -> SymmetricKey {
        let context = try KDFContext(algorithm: "SSKDF")
        let digest: OpenSSLName = "SHA256"
        let output = try storage.withUnsafeBytes { secret in
            try LibCrypto.withContiguousBytes(otherInfo) { info in
                // libcrypto only reads through these pointers; its API is not const-correct.
                let parameters = [
                    OSSL_PARAM_construct_utf8_string(OpenSSLName.kdfDigest.cString, UnsafeMutablePointer(mutating: digest.cString), 0),
                    OSSL_PARAM_construct_octet_string(OpenSSLName.kdfKey.cString, UnsafeMutableRawPointer(mutating: secret.baseAddress), secret.count),
                    OSSL_PARAM_construct_octet_string(OpenSSLName.kdfInfo.cString, UnsafeMutableRawPointer(mutating: info.baseAddress), info.count),
                    OSSL_PARAM_construct_end(),
                ]
                return try context.derive(count: outputByteCount, parameters: parameters)
            }
        }
        return SymmetricKey(storage: output)
    }

    /// The length only; the bytes never appear in logs.
    public var description: String { "SharedSecret(\(storage.count) bytes)" }
}
