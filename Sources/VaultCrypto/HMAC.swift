import CLibCrypto
import Foundation

/// A hash-based message authentication code (RFC 2104), spelled `HMAC<SHA256>` as in CryptoKit.
public enum HMAC<H: HashFunction>: Sendable {}

extension HMAC where H == SHA256 {
    /// Returns the 32-byte HMAC-SHA256 of `data` under `key`.
    ///
    /// Never throws; traps only if libcrypto cannot allocate memory.
    public static func authenticationCode(for data: some DataProtocol, using key: SymmetricKey) -> Data {
        var code = Data(count: SHA256.byteCount)
        LibCrypto.mustSucceed {
            try key.withUnsafeBytes { keyBytes in
                try LibCrypto.withContiguousBytes(data) { message in
                    try code.withUnsafeMutableBytes { output in
                        var length: UInt32 = 0
                        let result = CLibCrypto.HMAC(
                            EVP_sha256(),
                            keyBytes.baseAddress, Int32(keyBytes.count),
                            message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count,
                            output.baseAddress?.assumingMemoryBound(to: UInt8.self), &length
                        )
                        _ = try LibCrypto.nonNull(result, .libraryFailure, "HMAC failed")
                        guard length == SHA256.byteCount else {
                            throw CryptoError(.libraryFailure, "HMAC returned an unexpected length")
                        }
                    }
                }
            }
        }
        return code
    }

    /// Checks a full-length (32-byte) HMAC-SHA256 code in constant time; truncated codes are refused.
    ///
    /// Never throws.
    public static func isValidAuthenticationCode(
        _ code: some DataProtocol,
        authenticating data: some DataProtocol,
        using key: SymmetricKey
    ) -> Bool {
        let expected = authenticationCode(for: data, using: key)
        return expected.withUnsafeBytes { expectedBytes in
            LibCrypto.withContiguousBytes(code) { LibCrypto.constantTimeEquals(expectedBytes, $0) }
        }
    }
}
