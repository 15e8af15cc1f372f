import Foundation
import VaultCrypto

/// An AES-256 key-encryption key (`A256KW`) kept in a file of mode 0600, or in another `StoredKeySource` (on Apple
/// platforms a Keychain item behind biometric access control: the seed's "symmetric wrap key protected by Secure
/// Enclave-backed access control").
///
/// The key is read from its source on every use, as a platform keystore would be consulted, so deleting it destroys
/// the key and later calls fail with `.invalidated`.
public struct SymmetricKEK: KeyEncryptionKey {
    /// Where the key is read from.
    public let source: any StoredKeySource
    /// The key file, for a key kept in one.
    public var fileURL: URL? { (source as? KeyFileSource)?.fileURL }
    /// `base64url(HMAC-SHA256(key, "WalletVault-v1 kek_id")[0..<16])`, known without reading the key.
    public let kekID: String
    /// Always `A256KW`.
    public var algorithm: KeyWrapAlgorithm { .a256kw }
    /// A file wraps without asking anyone; a source behind access control needs its holder.
    public var canWrapWithoutHolder: Bool { !source.requiresHolder }

    /// Generates a random 256-bit key and stores it in a new file of mode 0600 at `url`.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file exists or cannot be written.
    public static func create(at url: URL) throws(VaultEnvelopeError) -> SymmetricKEK {
        let key = SymmetricKey(size: .bits256)
        var bytes = key.withUnsafeBytes { Data($0) }
        defer { bytes.resetBytes(in: bytes.startIndex..<bytes.endIndex) }
        try OwnerOnlyFile.create(url, bytes: bytes)
        return SymmetricKEK(source: KeyFileSource(fileURL: url), kekID: KeyIdentifier.symmetric(key))
    }

    /// Opens the key stored at `url`.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file is readable by others, unreadable or not 32 bytes,
    ///   `.invalidated` if it does not exist.
    public init(contentsOf url: URL) throws(VaultEnvelopeError) {
        source = KeyFileSource(fileURL: url)
        kekID = KeyIdentifier.symmetric(try source.loadKey())
    }

    /// A key in `source` whose `kek_id` was recorded when it was made (so matching entries needs no prompt).
    public init(source: any StoredKeySource, kekID: String) {
        self.source = source
        self.kekID = kekID
    }

    /// The `kek_id` an A256KW key has, to record beside a new key kept in a `StoredKeySource`.
    public static func kekID(of key: SymmetricKey) -> String { KeyIdentifier.symmetric(key) }

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
        let key = A256KWKey(key: try source.loadKey(), source: .stored)
        // A source now holding another key means this key is gone, exactly as if it had been deleted.
        guard key.kekID == kekID else {
            throw VaultEnvelopeError(.invalidated, "the key's store now holds a different key")
        }
        return key
    }
}

/// Where a stored `A256KW` key lives.
public protocol StoredKeySource: Sendable {
    /// Whether reading the key asks its holder (a biometric prompt), so rotations leave it to them.
    var requiresHolder: Bool { get }
    /// The 256-bit key, read anew on every use.
    ///
    /// - Throws: `VaultEnvelopeError` `.invalidated` when the key is gone, `.userCanceled` when the holder declined,
    ///   `.keyStorage` when it cannot be read or is not a 256-bit key.
    func loadKey() throws(VaultEnvelopeError) -> SymmetricKey
}

/// A key in a file of mode 0600 that only its owner can read.
public struct KeyFileSource: StoredKeySource {
    /// The key file.
    public let fileURL: URL

    /// Reads the key from `fileURL`.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// A file asks no one.
    public var requiresHolder: Bool { false }

    /// The key in the file.
    ///
    /// - Throws: `VaultEnvelopeError` `.invalidated` if the file is gone, `.keyStorage` if it is readable by others,
    ///   unreadable or not 32 bytes.
    public func loadKey() throws(VaultEnvelopeError) -> SymmetricKey { try Self.loadKey(fileURL) }

    private static func loadKey(_ url: URL) throws(VaultEnvelopeError) -> SymmetricKey {
        var bytes = try KeyFile.contents(of: url, maxBytes: 32)
        defer { bytes.resetBytes(in: bytes.startIndex..<bytes.endIndex) }
        guard bytes.count == 32 else {
            throw VaultEnvelopeError(.keyStorage, "key file \(url.lastPathComponent) does not hold a 256-bit key")
        }
        return SymmetricKey(data: bytes)
    }
}
