/// Where this device's key lives: a key file in the profile directory (`LocalVaultStore`, Linux and other desktops),
/// or the Secure Enclave and Keychain on Apple platforms (`PlatformDeviceKeyStore`), or what an app supplies.
public protocol DeviceKeyStore: Sendable {
    /// This device's key, nil before one was created.
    ///
    /// - Throws: `SyncError` `.keyInvalidated` when a key exists but the platform no longer lets it work (biometry
    ///   changed, the app was restored onto another phone), `.authenticationCanceled` when the holder declined to
    ///   unlock it, `.localStorage` when it cannot be read.
    func currentDeviceKey() throws(SyncError) -> (any DeviceKey)?
    /// Creates and stores a fresh key, replacing a dead one.
    ///
    /// - Throws: `SyncError` `.localStorage` (or `.authenticationCanceled`) when no key can be created.
    func newDeviceKey() throws(SyncError) -> any DeviceKey
    /// The `kek_id` of the last key created, still readable after that key died (to drop its entry on recovery).
    func lastDeviceKeyID() -> String?
}

extension DeviceKeyStore {
    /// This device's key, created on first use.
    ///
    /// - Throws: `SyncError` as `currentDeviceKey()` and `newDeviceKey()` do.
    func deviceKeyCreatingIfNeeded() throws(SyncError) -> any DeviceKey {
        if let key = try currentDeviceKey() { return key }
        return try newDeviceKey()
    }
}
