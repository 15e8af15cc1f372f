import VaultEnvelope

/// Where this device's key lives: a key file in the profile directory (`LocalVaultStore`, Linux and other desktops),
/// or the Secure Enclave and Keychain on Apple platforms (`PlatformDeviceKeyStore`), or what an app supplies.
public protocol DeviceKeyStore: Sendable {
    /// This device's key, nil before one was created.
    ///
    /// - Throws: `SyncError` `.keyInvalidated` when a key exists but the platform no longer lets it work (biometry
    ///   changed, the app was restored onto another phone), `.authenticationCanceled` when the holder declined to
    ///   unlock it, `.notNow` when it cannot be used now, `.localStorage` when it cannot be read.
    func currentDeviceKey() throws(SyncError) -> (any DeviceKey)?
    /// Creates and stores a fresh key, replacing a dead one only once the new one is stored.
    ///
    /// - Throws: `SyncError` `.localStorage` (or `.authenticationCanceled`, `.notNow`) when no key can be created.
    func newDeviceKey() throws(SyncError) -> any DeviceKey
    /// The `kek_id` of the last key created, still readable after that key died (to drop its entry on recovery).
    func lastDeviceKeyID() -> String?
    /// An engine operation (a sync, a pairing, a recovery) starts: keys handed out until `operationEnded()` may share
    /// one authentication, so the operation prompts at most once.
    func operationBegan()
    /// The operation ended: the next one authenticates anew.
    func operationEnded()
    /// The error the engine reports for `error`, which one of this store's keys threw in use; nil for the engine's
    /// own mapping. Lets a store report what the envelope layer has no code for (`.notNow`).
    func syncError(for error: VaultEnvelopeError) -> SyncError?
}

extension DeviceKeyStore {
    /// This device's key, created on first use.
    ///
    /// - Throws: `SyncError` as `currentDeviceKey()` and `newDeviceKey()` do.
    func deviceKeyCreatingIfNeeded() throws(SyncError) -> any DeviceKey {
        if let key = try currentDeviceKey() { return key }
        return try newDeviceKey()
    }

    /// Nothing to do for a store whose keys never prompt.
    public func operationBegan() {}
    /// Nothing to do for a store whose keys never prompt.
    public func operationEnded() {}
    /// The engine's own mapping.
    public func syncError(for error: VaultEnvelopeError) -> SyncError? { nil }
}
