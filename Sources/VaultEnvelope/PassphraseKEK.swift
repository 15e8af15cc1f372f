import Foundation
import VaultCrypto

/// A passphrase as key-encryption key: Argon2id with the salt and costs stored in the entry gives an `A256KW` key.
///
/// Enroll with `init(passphrase:costs:)`; on a device that only has the blob, `unlock(passphrase:in:)` finds the
/// entry, checks its costs against `Argon2idCosts.floor` so a server cannot weaken them, and derives the key.
public struct PassphraseKEK: KeyEncryptionKey {
    private let core: A256KWKey
    /// The Argon2id salt (16 random bytes for new entries).
    public let salt: Data
    /// The Argon2id costs.
    public let costs: Argon2idCosts

    /// The key check value of the derived key.
    public var kekID: String { core.kekID }
    /// Always `A256KW`.
    public var algorithm: KeyWrapAlgorithm { .a256kw }
    /// The derived key wraps without asking for the passphrase again.
    public var canWrapWithoutHolder: Bool { true }

    /// Derives a key for a new entry with a fresh 16-byte salt.
    ///
    /// Argon2id runs on the calling thread and takes as long as `costs` make it (about a quarter second at the default).
    /// `argon2id` is libargon2 on Linux; on Apple platforms pass the app's (`Argon2idDeriving`).
    /// - Throws: `VaultEnvelopeError` `.weakParameters` for costs outside `Argon2idCosts.floor...ceiling`,
    ///   `.unsupportedAlgorithm` without an Argon2id implementation, `.cryptoFailure` if Argon2id fails.
    public init(passphrase: String, costs: Argon2idCosts = .default,
                argon2id: (any Argon2idDeriving)? = Argon2idPlatform.builtIn) throws(VaultEnvelopeError) {
        try self.init(passphrase: passphrase, salt: SecureRandom.bytes(count: 16), costs: costs, argon2id: argon2id)
    }

    private init(passphrase: String, salt: Data, costs: Argon2idCosts, argon2id: (any Argon2idDeriving)?) throws(VaultEnvelopeError) {
        guard costs.isWithinReaderLimits else {
            throw VaultEnvelopeError(
                .weakParameters, "Argon2id costs \(costs) are outside \(Argon2idCosts.floor) to \(Argon2idCosts.ceiling)")
        }
        guard let argon2id else {
            throw VaultEnvelopeError(.unsupportedAlgorithm, "no Argon2id implementation on this platform: the app must pass one")
        }
        let key: SymmetricKey
        do {
            key = try argon2id.deriveKey(
                password: Data(passphrase.utf8), salt: salt, iterations: costs.iterations, memoryKiB: costs.memoryKiB,
                parallelism: costs.parallelism, outputByteCount: 32
            )
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "Argon2id failed: \(error)")
        }
        self.salt = salt
        self.costs = costs
        core = A256KWKey(key: key, source: .passphrase(salt: salt, costs: costs))
    }

    /// Derives the key for the passphrase entry of `envelope` whose `kek_id` the passphrase reproduces.
    ///
    /// - Throws: `VaultEnvelopeError` `.weakParameters` if an entry's costs are below the floor (or above the
    ///   ceiling), `.noMatchingKey` if the envelope has no passphrase entry or the passphrase is wrong.
    public static func unlock(passphrase: String, in envelope: VaultEnvelope,
                              argon2id: (any Argon2idDeriving)? = Argon2idPlatform.builtIn) throws(VaultEnvelopeError) -> PassphraseKEK {
        for entry in envelope.entries {
            guard case .a256kw(.passphrase(let salt, let costs)) = entry.scheme else { continue }
            let candidate = try PassphraseKEK(passphrase: passphrase, salt: salt, costs: costs, argon2id: argon2id)
            if candidate.kekID == entry.kekID { return candidate }
        }
        throw VaultEnvelopeError(.noMatchingKey, "no passphrase entry matches this passphrase")
    }

    /// Wraps `dek` with RFC 3394 under the derived key; the entry carries the salt and costs.
    ///
    /// - Throws: `VaultEnvelopeError` `.cryptoFailure` if the primitive fails.
    public func wrap(_ dek: SymmetricKey) async throws -> WrappedKey {
        try core.wrap(dek)
    }

    /// Unwraps an `A256KW` passphrase entry made with this key.
    ///
    /// - Throws: `VaultEnvelopeError` `.unwrapFailed` for another scheme or an altered entry.
    public func unwrap(_ entry: WrappedKey) async throws -> SymmetricKey {
        try core.unwrap(entry)
    }
}
