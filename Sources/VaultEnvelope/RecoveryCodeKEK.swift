import Foundation
import VaultCrypto

/// A recovery code as key-encryption key: HKDF-SHA256 stretches its 140 random bits to an `A256KW` key.
///
/// Once built (at enrollment, or after the user typed the code) it wraps without the user, so keep the instance
/// only as long as its holder would want the code to be usable.
public struct RecoveryCodeKEK: KeyEncryptionKey {
    private let core: A256KWKey
    private static let info = Data("WalletVault-v1 recovery code A256KW".utf8)

    /// The key check value of the derived key.
    public var kekID: String { core.kekID }
    /// Always `A256KW`.
    public var algorithm: KeyWrapAlgorithm { .a256kw }
    /// The derived key wraps without asking for the code again.
    public var canWrapWithoutHolder: Bool { true }

    /// Derives the key: `HKDF-SHA256(IKM = the 28 canonical characters, salt = empty,
    /// info = "WalletVault-v1 recovery code A256KW", L = 32)`.
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` if HKDF fails.
    public init(code: RecoveryCode) throws(VaultEnvelopeError) {
        do {
            let key = try code.withCanonicalBytes { bytes in
                try HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), salt: Data(), info: Self.info, outputByteCount: 32)
            }
            core = A256KWKey(key: key, source: .recoveryCode)
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "cannot derive the recovery key")
        }
    }

    /// Wraps `dek` with RFC 3394 under the derived key.
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` if the primitive fails.
    public func wrap(_ dek: SymmetricKey) async throws -> WrappedKey {
        try core.wrap(dek)
    }

    /// Unwraps an `A256KW` recovery-code entry.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for another scheme or an altered entry.
    public func unwrap(_ entry: WrappedKey) async throws -> SymmetricKey {
        try core.unwrap(entry)
    }
}
