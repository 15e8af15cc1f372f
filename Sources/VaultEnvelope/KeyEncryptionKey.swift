import VaultCrypto

/// Something that can wrap a DEK into an entry of `wrappedDeks`: a key-encryption key, or only the public half of one.
///
/// Calls are `async` because a platform key may prompt the user (biometrics, passcode) before it works.
public protocol KeyWrapping: Sendable {
    /// The `kek_id` written into entries: stable for the key, revealing nothing secret about it.
    var kekID: String { get }
    /// The `alg` of entries this key writes.
    var algorithm: KeyWrapAlgorithm { get }
    /// Whether wrapping works without the key's holder present (no prompt, no secret only the user can supply).
    ///
    /// Rotation re-wraps for such keys unattended; others it reports unless the caller allows prompts.
    var canWrapWithoutHolder: Bool { get }

    /// Wraps `dek` into an entry (label and creation time are stamped by the sealer).
    ///
    /// - Throws: `VaultEnvelopeError` `.invalidated` when the platform destroyed the key, `.keyStorage` when it
    ///   cannot be read, `.cryptoFailure` when a primitive fails.
    func wrap(_ dek: SymmetricKey) async throws -> WrappedKey
}

/// A key-encryption key whose holder can also unwrap: a device key, a recovery code, a passphrase.
public protocol KeyEncryptionKey: KeyWrapping {
    /// Unwraps the DEK from an entry whose `kek_id` is this key's, in this key's scheme or the seed's form.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for an entry this key did not wrap (or one that was altered),
    ///   `.invalidated` when the platform destroyed the key, `.keyStorage` when it cannot be read.
    func unwrap(_ entry: WrappedKey) async throws -> SymmetricKey
}
