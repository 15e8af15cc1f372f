import Foundation
import VaultCrypto

/// A software AES-256 key-encryption key (`A256KW`) kept in a file of mode 0600.
///
/// The key is read from its file on every use, as a platform keystore would be consulted, so deleting the file
/// destroys the key and later calls fail with `.invalidated`.
public struct SymmetricKEK: KeyEncryptionKey {
    /// The key file.
    public let fileURL: URL
    /// `base64url(HMAC-SHA256(key, "WalletVault-v1 kek_id")[0..<16])`.
    public let kekID: String
    /// Always `A256KW`.
    public var algorithm: KeyWrapAlgorithm { .a256kw }
    /// The device holding the file wraps without asking anyone.
    public var canWrapWithoutHolder: Bool { true }

    /// Generates a random 256-bit key and stores it in a new file of mode 0600 at `url`.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file exists or cannot be written.
    public static func create(at url: URL) throws(VaultEnvelopeError) -> SymmetricKEK {
        let key = SymmetricKey(size: .bits256)
        var bytes = key.withUnsafeBytes { Data($0) }
        defer { bytes.resetBytes(in: bytes.startIndex..<bytes.endIndex) }
        try OwnerOnlyFile.create(url, bytes: bytes)
        return SymmetricKEK(fileURL: url, kekID: KeyIdentifier.symmetric(key))
    }

    /// Opens the key stored at `url`.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file is readable by others, unreadable or not 32 bytes,
    ///   `.invalidated` if it does not exist.
    public init(contentsOf url: URL) throws(VaultEnvelopeError) {
        fileURL = url
        kekID = KeyIdentifier.symmetric(try Self.loadKey(url))
    }

    private init(fileURL: URL, kekID: String) {
        self.fileURL = fileURL
        self.kekID = kekID
    }

    /// Wraps `dek` with RFC 3394 under the stored key.
    ///
    /// - Throws: `VaultEnvelopeError` `.invalidated` if the file is gone or now holds another key, `.keyStorage` if
    ///   it cannot be read.
    public func wrap(_ dek: SymmetricKey) async throws -> WrappedKey {
        try currentKey().wrap(dek)
    }

    /// Unwraps an `A256KW` entry, or a seed-form entry holding an RFC 3394 wrapped DEK.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for another scheme or a wrong key, `.invalidated` or
    ///   `.keyStorage` as `wrap(_:)`.
    public func unwrap(_ entry: WrappedKey) async throws -> SymmetricKey {
        try currentKey().unwrap(entry)
    }

    private func currentKey() throws(VaultEnvelopeError) -> A256KWKey {
        let key = A256KWKey(key: try Self.loadKey(fileURL), source: .stored)
        // A file replaced by another key means this key is gone, exactly as if the file had been deleted.
        guard key.kekID == kekID else {
            throw VaultEnvelopeError(.invalidated, "key file \(fileURL.lastPathComponent) now holds a different key")
        }
        return key
    }

    private static func loadKey(_ url: URL) throws(VaultEnvelopeError) -> SymmetricKey {
        var bytes = try KeyFile.contents(of: url, maxBytes: 32)
        defer { bytes.resetBytes(in: bytes.startIndex..<bytes.endIndex) }
        guard bytes.count == 32 else {
            throw VaultEnvelopeError(.keyStorage, "key file \(url.lastPathComponent) does not hold a 256-bit key")
        }
        return SymmetricKey(data: bytes)
    }
}
