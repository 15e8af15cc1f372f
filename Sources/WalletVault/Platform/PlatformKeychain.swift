import Foundation
import VaultEnvelope

/// The platform's store of this device's P-256 key: on Apple platforms the Secure Enclave and the Keychain
/// (`SecureEnclaveKeychain`); in tests a fake that fails the way they do. `PlatformDeviceKeyStore` holds the rules
/// around it (what a missing item means, what each failure becomes), so those rules run on every platform.
public protocol PlatformKeychain: Sendable {
    /// The stored key item (a Secure Enclave key's `dataRepresentation`, or a fallback key), nil when there is none.
    ///
    /// - Throws: `PlatformKeyError` when the item exists but cannot be read.
    func readKeyItem() throws(PlatformKeyError) -> Data?
    /// Creates a key with the app's access control, stores its item (replacing any), and returns the key.
    ///
    /// - Throws: `PlatformKeyError` when no key can be created or stored.
    func createKey() throws(PlatformKeyError) -> any P256KeyAgreementKey
    /// The key an item holds. Using it may prompt its holder; a failure then is a `PlatformKeyError` too.
    ///
    /// - Throws: `PlatformKeyError` `.invalidated` for an item that no longer yields a key.
    func key(fromItem item: Data) throws(PlatformKeyError) -> any P256KeyAgreementKey
}
