import Foundation
import VaultCrypto
import VaultEnvelope

/// This device's key in the platform's key store (the Secure Enclave and Keychain on iOS), with the seed's
/// self-ECDH entry, and the rules for when it stops working, the same on every platform.
///
/// - No item, and no key was ever created here: no key yet (create one, pair, or recover).
/// - No item, but this profile recorded a key: the key is gone (the app was restored onto another phone, where
///   neither Secure Enclave keys nor `ThisDeviceOnly` items exist): `.keyInvalidated`, and the §7 recovery runs.
/// - The key fails in use because biometry changed: `.keyInvalidated` too. A cancelled prompt is
///   `.authenticationCanceled`: nothing changed, and no recovery is offered for it.
public struct PlatformDeviceKeyStore: DeviceKeyStore {
    private let keychain: any PlatformKeychain
    private let profile: LocalVaultStore

    /// Keeps the key in `keychain` and the `kek_id` of the last key created in `profile` (not secret), so a key
    /// that vanished is told apart from one never created.
    public init(keychain: any PlatformKeychain, profile: LocalVaultStore) {
        self.keychain = keychain
        self.profile = profile
    }

    /// The key, nil when none was ever created here.
    ///
    /// - Throws: `SyncError` `.keyInvalidated` when the recorded key is gone, and as `PlatformKeyError.syncError` says.
    public func currentDeviceKey() throws(SyncError) -> (any DeviceKey)? {
        let item: Data?
        do { item = try keychain.readKeyItem() } catch { throw error.syncError }
        guard let item else {
            guard lastDeviceKeyID() == nil else {
                throw SyncError(.keyInvalidated, "this device's key is gone (restored onto another device, or removed)")
            }
            return nil
        }
        do { return SelfECDHDeviceKey(PlatformAgreementKey(try keychain.key(fromItem: item))) } catch { throw error.syncError }
    }

    /// Creates a key (replacing a dead one) and records its `kek_id`.
    ///
    /// - Throws: `SyncError` as `PlatformKeyError.syncError` says, `.localStorage` when the id cannot be recorded.
    public func newDeviceKey() throws(SyncError) -> any DeviceKey {
        let key: any P256KeyAgreementKey
        do { key = try keychain.createKey() } catch { throw error.syncError }
        let device = SelfECDHDeviceKey(PlatformAgreementKey(key))
        try profile.rememberDeviceKeyID(device.kekID)
        return device
    }

    /// The `kek_id` of the last key created here.
    public func lastDeviceKeyID() -> String? { profile.deviceKeyID() }
}

/// A platform key whose failures in use reach the envelope layer as `.invalidated` or `.userCanceled`.
struct PlatformAgreementKey: P256KeyAgreementKey {
    let base: any P256KeyAgreementKey

    init(_ base: any P256KeyAgreementKey) {
        self.base = base
    }

    var publicKey: P256.KeyAgreement.PublicKey { base.publicKey }

    func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws -> SharedSecret {
        do { return try base.sharedSecretFromKeyAgreement(with: publicKeyShare) } catch let error as PlatformKeyError {
            throw error.envelopeError
        }
    }
}
