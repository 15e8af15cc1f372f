import Foundation
import VaultCrypto
import VaultEnvelope

/// The optional second way in for an iPhone (issue #28 point 5): a random 256-bit key kept in the user's iCloud
/// Keychain, enrolled as its own `A256KW` entry labelled `SyncedRecoveryKey.label`. A restored or new iPhone of the
/// same Apple account, which has no Secure Enclave key for the vault (Secure Enclave keys and `ThisDeviceOnly` items
/// never leave a device), opens the vault with it, then enrolls its own new Secure Enclave key; the synced key stays.
///
/// It is an `A256KW` stored key like a key file, so its entry authenticates its writer (FORMAT.md §11.2): recovery
/// through it learns the vault's anchor, as recovery through a recovery code does. Reading it asks no one (the item
/// has no access control: the biometry set is per device, so a biometry-bound item could never open on the new
/// phone), so rotations re-wrap it without a prompt.
public struct SyncedRecoveryKey: StoredKeySource {
    /// The label of its entry, as `devices()` shows it; devices that do not hold the key recognise its entry by it.
    public static let label = "iCloud Keychain recovery key"

    private let store: any SyncedKeyStore

    /// The key kept in `store` (on Apple platforms an `ICloudKeychainKeyStore`).
    public init(store: any SyncedKeyStore) {
        self.store = store
    }

    /// Reading it never prompts.
    public var requiresHolder: Bool { false }

    /// The key, read anew on every use.
    ///
    /// - Throws: `VaultEnvelopeError` `.invalidated` when it is gone (revoked, or deleted on another device of the
    ///   account), `.keyStorage` when it cannot be read now or is not a 256-bit key.
    public func loadKey() throws(VaultEnvelopeError) -> SymmetricKey {
        let data: Data?
        do { data = try store.readSyncedKey() } catch {
            throw VaultEnvelopeError(.keyStorage, "the iCloud Keychain recovery key: \(error)")
        }
        guard let data else { throw VaultEnvelopeError(.invalidated, "the iCloud Keychain recovery key is gone") }
        guard data.count == 32 else { throw VaultEnvelopeError(.keyStorage, "the iCloud Keychain item does not hold a 256-bit key") }
        return SymmetricKey(data: data)
    }

    /// The stored key as a key-encryption key; nil when this device holds none.
    ///
    /// - Throws: `SyncError` `.notNow` before the first unlock, `.localStorage` when the item is unreadable or damaged.
    public func storedKEK() throws(SyncError) -> SymmetricKEK? {
        let data: Data?
        do { data = try store.readSyncedKey() } catch { throw Self.syncError(error) }
        guard let data else { return nil }
        guard data.count == 32 else { throw SyncError(.localStorage, "the iCloud Keychain item does not hold a 256-bit key") }
        return SymmetricKEK(source: self, kekID: SymmetricKEK.kekID(of: SymmetricKey(data: data)))
    }

    /// A new random key, stored in place of any stored one.
    ///
    /// - Throws: `SyncError` `.localStorage` (or `.notNow`) when the Keychain refuses.
    func createKEK() throws(SyncError) -> SymmetricKEK {
        let key = SymmetricKey(size: .bits256)
        var bytes = key.withUnsafeBytes { Data($0) }
        defer { bytes.resetBytes(in: bytes.startIndex..<bytes.endIndex) }
        do { try store.storeSyncedKey(bytes) } catch { throw Self.syncError(error) }
        return SymmetricKEK(source: self, kekID: SymmetricKEK.kekID(of: key))
    }

    /// Deletes the key from the account's iCloud Keychain, on every device.
    ///
    /// - Throws: `SyncError` `.localStorage` (or `.notNow`) when the Keychain refuses.
    func delete() throws(SyncError) {
        do { try store.deleteSyncedKey() } catch { throw Self.syncError(error) }
    }

    /// A store failure as the engine reports it: "not now" before the first unlock, otherwise a local failure; never
    /// `.keyInvalidated`, which is about this device's own key.
    private static func syncError(_ error: PlatformKeyError) -> SyncError {
        switch error {
        case .unavailable(let reason): SyncError(.notNow, "the iCloud Keychain recovery key cannot be read now: \(reason)")
        case .canceled: SyncError(.authenticationCanceled, "reading the iCloud Keychain recovery key was cancelled")
        case .invalidated(let reason), .failed(let reason): SyncError(.localStorage, "the iCloud Keychain recovery key: \(reason)")
        }
    }
}
