import Foundation
import VaultCrypto

/// Opens vault blobs of either form, refusing older versions than this device has accepted.
///
/// Order of checks: JSON and shape; the counter against the highest accepted (before any key is touched, so a
/// rolled-back blob never prompts the user); the DEK; the header MACs; the vault's AES-GCM tag.
public struct VaultOpener: Sendable {
    /// A vault's plaintext and the state for sealing its next version.
    public struct OpenedVault: Sendable {
        /// The decrypted contents.
        public let plaintext: Data
        /// The state to hand to `VaultSealer` for the next version.
        public let state: VaultState
    }

    private let counterStore: any CounterStore

    /// Creates an opener that remembers counters in `counterStore`.
    public init(counterStore: any CounterStore) {
        self.counterStore = counterStore
    }

    /// Parses and opens a blob with the first of `keys` that has an entry in it.
    ///
    /// - Throws: `VaultEnvelopeError` as `VaultEnvelope(parsing:)` and `open(_:vaultID:keys:)` do.
    public func open(_ blob: Data, vaultID: String, keys: [any KeyEncryptionKey]) async throws -> OpenedVault {
        try await open(try VaultEnvelope(parsing: blob), vaultID: vaultID, keys: keys)
    }

    /// Opens a parsed envelope with the first of `keys` that has an entry in it.
    ///
    /// - Throws: `VaultEnvelopeError` `.rollback` naming both counters; `.noMatchingKey`; what the key's `unwrap`
    ///   throws (`.unwrapFailed`, `.invalidated`, ...); `.recipientsAltered`, `.timestampAltered`, `.hintAltered`,
    ///   `.counterAltered` for an edited header; `.ciphertextAltered` when the AES-GCM tag does not verify.
    public func open(_ envelope: VaultEnvelope, vaultID: String, keys: [any KeyEncryptionKey]) async throws -> OpenedVault {
        let highest = try await counterStore.highestCounter(for: vaultID)
        if let counter = envelope.counter, counter < highest {
            throw VaultEnvelopeError(.rollback, "blob counter \(counter) is below \(highest), already accepted for this vault")
        }
        if envelope.counter == nil, highest > 0 {
            throw VaultEnvelopeError(.rollback, "a seed-form blob (no counter) after counter \(highest) was accepted")
        }
        let opened = try await decrypt(envelope, vaultID: vaultID, keys: keys)
        if let counter = envelope.counter, envelope.macs != nil { try await counterStore.advance(vaultID, to: counter) }
        return opened
    }

    /// Opens a kept older version the user asked for (to restore it), with every check but the counter's, which it
    /// neither compares nor advances: its content may only be saved again as a new version above the current one.
    ///
    /// - Throws: `VaultEnvelopeError` as `open(_:vaultID:keys:)` does, except `.rollback`.
    public func openPastVersion(_ blob: Data, vaultID: String, keys: [any KeyEncryptionKey]) async throws -> OpenedVault {
        try await decrypt(try VaultEnvelope(parsing: blob), vaultID: vaultID, keys: keys)
    }

    private func decrypt(_ envelope: VaultEnvelope, vaultID: String, keys: [any KeyEncryptionKey]) async throws -> OpenedVault {
        let dek = try await WrappedKey.unwrapDEK(from: envelope.entries, form: envelope.form, keys: keys).dek

        let plaintext: Data
        if let macs = envelope.macs, envelope.counter != nil {
            try HeaderAuthenticator(dek: dek).verify(macs: macs, header: envelope.header)
            plaintext = try Self.openVault(envelope.sealedBox, dek: dek, aad: try HeaderAuthenticator.additionalData(header: envelope.header))
        } else {
            plaintext = try Self.openVault(envelope.sealedBox, dek: dek, aad: Data())
        }
        return OpenedVault(
            plaintext: plaintext, state: VaultState(vaultID: vaultID, envelope: envelope, entries: envelope.entries, dek: dek))
    }

    private static func openVault(_ box: AES.GCM.SealedBox, dek: SymmetricKey, aad: Data) throws(VaultEnvelopeError) -> Data {
        do {
            return try AES.GCM.open(box, using: dek, authenticating: aad)
        } catch {
            throw VaultEnvelopeError(.ciphertextAltered, "the vault ciphertext, IV or tag does not verify")
        }
    }
}
