import Foundation
import VaultCrypto

/// A passphrase as key-encryption key: Argon2id with the salt and costs stored in the entry gives an `A256KW` key.
///
/// Enroll with `init(passphrase:costs:)`; on a device that only has the blob, `unlock(passphrase:in:)` finds the
/// entry, checks every passphrase entry's costs against `Argon2idCosts`' limits so a server can neither weaken
/// them nor make the device derive without end, and derives the key.
///
/// The passphrase is normalized to Unicode NFC before Argon2id, on enrollment and on unlock, so the same text typed
/// on keyboards that produce composed or decomposed accents gives one key (FORMAT.md §7.3).
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

    /// Derives a key for a new entry with a fresh 16-byte salt, from the passphrase in NFC.
    ///
    /// Argon2id runs on the calling thread and takes as long as `costs` make it (about a quarter second at the default).
    /// `argon2id` is libargon2 on Linux; on Apple platforms pass the app's (`Argon2idDeriving`).
    /// - Throws: `VaultEnvelopeError` `.weakParameters` for costs outside `Argon2idCosts.floor...ceiling`,
    ///   `.workLimitExceeded` for costs whose `work` alone is above `Argon2idCosts.maxWorkPerOpen` (no reader would
    ///   derive them), `.unsupportedAlgorithm` without an Argon2id implementation, `.cryptoFailure` if Argon2id fails.
    public init(
        passphrase: String, costs: Argon2idCosts = .default,
        argon2id: (any Argon2idDeriving)? = Argon2idPlatform.builtIn
    ) throws(VaultEnvelopeError) {
        try Argon2idCosts.checkOpenBudget([costs])
        try self.init(password: Self.normalized(passphrase), salt: SecureRandom.bytes(count: 16), costs: costs, argon2id: argon2id)
    }

    /// Derives with costs already checked.
    private init(password: Data, salt: Data, costs: Argon2idCosts, argon2id: (any Argon2idDeriving)?) throws(VaultEnvelopeError) {
        guard let argon2id else {
            throw VaultEnvelopeError(.unsupportedAlgorithm, "no Argon2id implementation on this platform: the app must pass one")
        }
        let key: SymmetricKey
        do {
            key = try argon2id.deriveKey(
                password: password, salt: salt, iterations: costs.iterations, memoryKiB: costs.memoryKiB,
                parallelism: costs.parallelism, outputByteCount: 32
            )
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "Argon2id failed: \(error)")
        }
        self.salt = salt
        self.costs = costs
        core = A256KWKey(key: key, source: .passphrase(salt: salt, costs: costs))
    }

    /// The UTF-8 bytes of the passphrase in Unicode Normalization Form C, what Argon2id derives from.
    static func normalized(_ passphrase: String) -> Data {
        Data(passphrase.precomposedStringWithCanonicalMapping.utf8)
    }

    /// Derives the key for the passphrase entry of `envelope` whose `kek_id` the passphrase reproduces.
    ///
    /// Before the first derivation every passphrase entry's costs are checked (one entry out of range refuses the
    /// blob; it is not skipped), and so are their number and total work. Entries are tried in blob order with the
    /// passphrase in NFC; only if none matches and the passphrase as given is not in NFC are they tried once more
    /// with it as given, for entries enrolled before passphrases were normalized.
    /// - Throws: `VaultEnvelopeError` `.weakParameters` if an entry's costs are below the floor or above the
    ///   ceiling, `.workLimitExceeded` for more than `Argon2idCosts.maxEntriesPerOpen` passphrase entries or more total
    ///   work than `Argon2idCosts.maxWorkPerOpen`, `.noMatchingKey` if the envelope has no passphrase entry or the
    ///   passphrase is wrong.
    public static func unlock(
        passphrase: String, in envelope: VaultEnvelope,
        argon2id: (any Argon2idDeriving)? = Argon2idPlatform.builtIn
    ) throws(VaultEnvelopeError) -> PassphraseKEK {
        var candidates: [(kekID: String, salt: Data, costs: Argon2idCosts)] = []
        for entry in envelope.entries {
            if case .a256kw(.passphrase(let salt, let costs)) = entry.scheme { candidates.append((entry.kekID, salt, costs)) }
        }
        try Argon2idCosts.checkOpenBudget(candidates.map(\.costs))
        let normalized = normalized(passphrase)
        let asGiven = Data(passphrase.utf8)
        for password in normalized == asGiven ? [normalized] : [normalized, asGiven] {
            for candidate in candidates {
                let key = try PassphraseKEK(password: password, salt: candidate.salt, costs: candidate.costs, argon2id: argon2id)
                if key.kekID == candidate.kekID { return key }
            }
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
