import VaultEnvelope

/// Argon2id key derivation with a spinner on a terminal: it takes a noticeable time by design.
enum PassphraseKeys {
    private static let label = "Deriving the passphrase key (Argon2id)"

    /// A new passphrase entry's key (fresh salt, default costs).
    ///
    /// - Throws: `CLIError` when derivation fails.
    static func derive(_ passphrase: String, terminal: any Terminal) async throws(CLIError) -> PassphraseKEK {
        do {
            return try await ProgressIndicator.during(label, terminal: terminal, delaySeconds: 0) { () async throws(VaultEnvelopeError) in
                try PassphraseKEK(passphrase: passphrase)
            }
        } catch {
            throw CLIError.from(error)
        }
    }

    /// The key of the vault's passphrase entry that `passphrase` opens.
    ///
    /// - Throws: `CLIError` `.noAccess` for a wrong passphrase, `.integrity` for weakened costs.
    static func unlock(_ passphrase: String, in envelope: VaultEnvelope, terminal: any Terminal) async throws(CLIError) -> PassphraseKEK {
        do {
            return try await ProgressIndicator.during(label, terminal: terminal, delaySeconds: 0) { () async throws(VaultEnvelopeError) in
                try PassphraseKEK.unlock(passphrase: passphrase, in: envelope)
            }
        } catch {
            throw CLIError.from(error)
        }
    }
}
