import Foundation

/// Where the iCloud Keychain recovery key lives: on Apple platforms a synchronizable Keychain item
/// (`ICloudKeychainKeyStore`), which every device signed in to the same Apple account with iCloud Keychain on sees;
/// in tests a fake account shared by two fake phones. `SyncedRecoveryKey` holds the rules around it.
public protocol SyncedKeyStore: Sendable {
    /// The stored 32-byte key, nil when there is none (never stored, deleted, or not synced to this device yet).
    /// Never prompts.
    ///
    /// - Throws: `PlatformKeyError` when the item exists but cannot be read (`.unavailable` before the first unlock).
    func readSyncedKey() throws(PlatformKeyError) -> Data?
    /// Stores `key`, replacing any stored one, on every device of the account.
    ///
    /// - Throws: `PlatformKeyError` when the Keychain refuses.
    func storeSyncedKey(_ key: Data) throws(PlatformKeyError)
    /// Deletes the stored key, on every device of the account; nothing happens when there is none.
    ///
    /// - Throws: `PlatformKeyError` when the Keychain refuses.
    func deleteSyncedKey() throws(PlatformKeyError)
}
