import VaultCrypto

/// A P-256 private key that agrees on a secret with a public key: a software key here, on iOS one the Secure Enclave
/// holds (CryptoKit's `SecureEnclave.P256.KeyAgreement.PrivateKey` has the same two members), so the self-ECDH and
/// ECDH-ES schemes work the same with either.
public protocol P256KeyAgreementKey: Sendable {
    /// The public half.
    var publicKey: P256.KeyAgreement.PublicKey { get }
    /// ECDH with `publicKeyShare`; a hardware key may ask its holder first.
    ///
    /// - Throws: what the key throws: an invalid point, or a platform error (the key is gone, authentication failed).
    func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws -> SharedSecret
}

extension P256.KeyAgreement.PrivateKey: P256KeyAgreementKey {}
