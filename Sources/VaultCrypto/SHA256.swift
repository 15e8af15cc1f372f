import CLibCrypto
import Foundation

/// SHA-256 (FIPS 180-4).
public enum SHA256: HashFunction {
    /// The digest length, 32 bytes.
    public static let byteCount = 32

    /// Returns the 32-byte digest of `data`.
    ///
    /// Never throws; traps only if libcrypto cannot allocate memory.
    public static func hash<D: DataProtocol>(data: D) -> Data {
        LibCrypto.mustSucceed { try DigestContext().digest(data, using: EVP_sha256()) }
    }
}
