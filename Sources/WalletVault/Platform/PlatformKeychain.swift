import Foundation
import VaultEnvelope

/// The platform's store of this device's P-256 key: on Apple platforms the Secure Enclave and the Keychain
/// (`SecureEnclaveKeychain`); in tests a fake that fails the way they do. `PlatformDeviceKeyStore` holds the rules
/// around it (what a missing item means, when a failure is key death, one prompt per operation), so those rules run
/// on every platform.
public protocol PlatformKeychain: Sendable {
    /// The current key item (a Secure Enclave key's `dataRepresentation`, or a fallback key), nil when there is none.
    /// Never prompts.
    ///
    /// - Throws: `PlatformKeyError` when the item exists but cannot be read (`.unavailable` while the device is locked).
    func readKeyItem() throws(PlatformKeyError) -> Data?
    /// Creates a key with the app's access control and stores its item beside the current one, which stays until
    /// `commitNewKey()`: a failure before then leaves this device with its old key.
    ///
    /// - Throws: `PlatformKeyError` when no key can be created or stored.
    func createKey(allowingPrompts: Bool) throws(PlatformKeyError) -> any P256KeyAgreementKey
    /// Makes the item `createKey` stored the current one, and only then deletes the old.
    ///
    /// - Throws: `PlatformKeyError` when the Keychain refuses; the new item is then still kept beside the old.
    func commitNewKey() throws(PlatformKeyError)
    /// Deletes an item `createKey` stored and `commitNewKey` never made current.
    func discardNewKey()
    /// The key an item holds. Every use of the returned key shares one authentication: the first use may prompt its
    /// holder (never when `allowingPrompts` is false: it then fails with `.unavailable`), later uses do not.
    ///
    /// - Throws: `PlatformKeyError` `.invalidated` for an item that no longer yields a key.
    func key(fromItem item: Data, allowingPrompts: Bool) throws(PlatformKeyError) -> any P256KeyAgreementKey
    /// The enrolled biometry now, read without prompting.
    func biometryState() -> PlatformBiometryState
}
