import VaultCrypto
import VaultEnvelope

/// The seed's iOS device key: a P-256 key (in the Secure Enclave on iOS) whose vault entry is self-ECDH
/// (`WV-ECDH-SELF+A256GCMKW`, kek_id the raw public key), which only its holder can write.
///
/// Pairing cannot write such an entry, so another device wraps to the same key's public half
/// (`ECDH-ES+A256KW`); the engine replaces that entry with this one on the device's first restore.
public struct SelfECDHDeviceKey: DeviceKey {
    private let own: SelfECDHKEK
    private let pairing: PairingEntryKey

    /// Uses `key` (a Secure Enclave key on iOS); a failure of the key in use is reported as the platform reports it.
    public init(_ key: any P256KeyAgreementKey) {
        own = SelfECDHKEK(privateKey: key)
        pairing = PairingEntryKey(key: key)
    }

    /// The self-ECDH `kek_id`: base64url of the raw public key, as the seed writes it.
    public var kekID: String { own.kekID }
    /// `WV-ECDH-SELF+A256GCMKW`.
    public var algorithm: KeyWrapAlgorithm { own.algorithm }
    /// Wrapping derives from the private key, so it needs the holder (a biometric prompt on iOS).
    public var canWrapWithoutHolder: Bool { false }
    /// The key's public half, as a pairing request shows it.
    public var pairingPublicKey: P256.KeyAgreement.PublicKey { pairing.key.publicKey }
    /// The self-ECDH entry's key and the pairing entry's.
    public var unwrappingKeys: [any KeyEncryptionKey] { [self, pairing] }

    /// Wraps `dek` into this device's self-ECDH entry.
    ///
    /// - Throws: `VaultEnvelopeError` `.invalidated` or `.userCanceled` from the platform key, `.cryptoFailure`.
    public func wrap(_ dek: SymmetricKey) async throws -> WrappedKey { try await own.wrap(dek) }

    /// Unwraps this device's self-ECDH entry (or a seed-form one the seed's iOS code wrote).
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed`, or `.invalidated` / `.userCanceled` from the platform key.
    public func unwrap(_ entry: WrappedKey) async throws -> SymmetricKey { try await own.unwrap(entry) }
}

/// The `ECDH-ES+A256KW` entry another device wrote to this device's public key when it approved the pairing.
struct PairingEntryKey: KeyEncryptionKey {
    let key: any P256KeyAgreementKey

    var kekID: String { PublicKeyRecipient(key.publicKey).kekID }
    var algorithm: KeyWrapAlgorithm { .ecdhESA256KW }
    var canWrapWithoutHolder: Bool { true }

    func wrap(_ dek: SymmetricKey) async throws -> WrappedKey { try await PublicKeyRecipient(key.publicKey).wrap(dek) }

    func unwrap(_ entry: WrappedKey) async throws -> SymmetricKey { try DeviceKEK.unwrap(entry, with: key) }
}
