import VaultCrypto
import VaultEnvelope

/// This device's own key-encryption key: the entry it keeps in the vault, and the public key it shows to be paired.
///
/// A software P-256 key (`DeviceKEK`, Linux) is both at once: its `ECDH-ES+A256KW` entry is what pairing writes. The
/// seed's iOS key (`SecureEnclaveDeviceKey`) keeps a self-ECDH entry only its holder can write, so another device
/// pairs it through an `ECDH-ES+A256KW` entry to the same key's public half, which the device replaces with its own
/// entry on its first restore.
public protocol DeviceKey: KeyEncryptionKey {
    /// The public key another device wraps the DEK to when it approves this device's pairing request.
    var pairingPublicKey: P256.KeyAgreement.PublicKey { get }
    /// Every key that opens an entry made for this device: its own entry's, and the pairing entry's if it differs.
    var unwrappingKeys: [any KeyEncryptionKey] { get }
}

extension DeviceKey {
    /// The `kek_id` of the entry pairing writes for this device.
    public var pairingKekID: String { PublicKeyRecipient(pairingPublicKey).kekID }
}

extension DeviceKEK: DeviceKey {
    /// The key's own public half: pairing writes the same `ECDH-ES+A256KW` entry this key enrolls as.
    public var pairingPublicKey: P256.KeyAgreement.PublicKey { privateKey.publicKey }
    /// Itself.
    public var unwrappingKeys: [any KeyEncryptionKey] { [self] }
}
