import Foundation
import VaultCrypto
import VaultEnvelope

/// Where the key sealing this device's local copies (working copy, merge base) lives.
public protocol AtRestKeyStore: Sendable {
    /// The key, created on first use and never replaced afterwards, which would orphan the sealed copies.
    ///
    /// - Throws: `SyncError` `.localStorage` when the key cannot be read or created, or is damaged.
    func atRestKey() throws(SyncError) -> SymmetricKey
}

/// The at-rest key as a 0600 file beside the copies: the default on Linux and other desktops.
public struct FileAtRestKeyStore: AtRestKeyStore {
    /// The key file.
    public let file: URL

    /// Keeps the key in `file`.
    public init(file: URL) {
        self.file = file
    }

    /// The key in the file, created with `O_EXCL` so two first writers agree on one.
    ///
    /// - Throws: `SyncError` `.localStorage` for a damaged or unwritable file, or one that group or others may read
    ///   (the rule of every secret file: a key others could read is not kept secret).
    public func atRestKey() throws(SyncError) -> SymmetricKey {
        if FileManager.default.fileExists(atPath: file.path) { return try Self.read(file) }
        let key = SymmetricKey(size: .bits256)
        do throws(VaultEnvelopeError) { try OwnerOnlyFile.create(file, bytes: key.withUnsafeBytes { Data($0) }) } catch {
            // Another writer created it first: use theirs.
            guard FileManager.default.fileExists(atPath: file.path) else { throw SyncError(.localStorage, "cannot write at-rest.key") }
            return try Self.read(file)
        }
        return key
    }

    private static func read(_ file: URL) throws(SyncError) -> SymmetricKey {
        let bytes: Data
        do throws(VaultEnvelopeError) { bytes = try KeyFile.contents(of: file, maxBytes: 32) } catch {
            throw SyncError(.localStorage, error.reason)
        }
        guard bytes.count == 32 else { throw SyncError(.localStorage, "at-rest.key is damaged; the local copies cannot be read") }
        return SymmetricKey(data: bytes)
    }
}
