import Foundation
import Synchronization
import WalletVault

/// A stand-in for one Apple account's iCloud Keychain: what every `FakeKeychain` signed in to it sees of the
/// synchronizable items, and nothing of the device-only ones (a `FakeKeychain`'s own key item never reaches it), as
/// Apple documents: a synchronizable item is "synchronized to other devices through iCloud", and updating or deleting
/// it "affects all copies of the item, not just the one on your local device"
/// (https://developer.apple.com/documentation/security/ksecattrsynchronizable), while `ThisDeviceOnly` items and
/// Secure Enclave keys never leave the device. Syncing is immediate here; on a device it may take a while.
final class FakeAppleAccount: SyncedKeyStore {
    private struct State {
        var syncedKey: Data?
        /// Plays a device not unlocked since it started: `AfterFirstUnlock` items answer errSecInteractionNotAllowed.
        var beforeFirstUnlock = false
        var writes = 0
    }

    private let state = Mutex(State())

    /// The synchronizable items stored in the account (0 or 1: this fake holds the recovery key's item only).
    var synchronizableItems: Int { state.withLock { $0.syncedKey == nil ? 0 : 1 } }

    /// How many times a synchronizable item was stored.
    var writes: Int { state.withLock { $0.writes } }

    /// Plays the device reading it not unlocked since it started (true) or unlocked once.
    func setBeforeFirstUnlock(_ value: Bool) { state.withLock { $0.beforeFirstUnlock = value } }

    func readSyncedKey() throws(PlatformKeyError) -> Data? {
        let (key, locked) = state.withLock { ($0.syncedKey, $0.beforeFirstUnlock) }
        if locked, key != nil { throw .unavailable("OSStatus -25308 (errSecInteractionNotAllowed): not unlocked since restart") }
        return key
    }

    func storeSyncedKey(_ key: Data) throws(PlatformKeyError) {
        state.withLock {
            $0.syncedKey = key
            $0.writes += 1
        }
    }

    func deleteSyncedKey() throws(PlatformKeyError) { state.withLock { $0.syncedKey = nil } }
}
