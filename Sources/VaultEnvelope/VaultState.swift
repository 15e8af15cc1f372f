import VaultCrypto

/// A vault as a device holds it between syncs: the last envelope, its DEK and the recipients the next seal will
/// write. Get one from `VaultOpener.open` or `VaultSealer`; pass it back to `VaultSealer` to write the next version.
public struct VaultState: Sendable {
    /// The caller's name for the vault (for example the account), under which counters are remembered.
    public let vaultID: String
    /// The envelope this state was opened from or sealed into.
    public let envelope: VaultEnvelope
    /// The entries the next seal writes: the envelope's, plus enrollments, minus revocations.
    public let entries: [WrappedKey]
    /// The vault's id and secrets; nil for a vault from before anchors, until its next seal mints them.
    public let identity: VaultIdentity?
    /// The DEK; never leaves the process.
    let dek: SymmetricKey

    init(vaultID: String, envelope: VaultEnvelope, entries: [WrappedKey], identity: VaultIdentity?, dek: SymmetricKey) {
        self.vaultID = vaultID
        self.envelope = envelope
        self.entries = entries
        self.identity = identity
        self.dek = dek
    }

    /// The envelope's counter (0 for the seed's form).
    public var counter: UInt64 { envelope.counter ?? 0 }
    /// Seals made with the current DEK (0 for the seed's form, whose count nobody kept).
    public var dekSeals: UInt64 { envelope.dekSeals ?? 0 }

    /// The same vault with other pending entries.
    func with(entries: [WrappedKey]) -> VaultState {
        VaultState(vaultID: vaultID, envelope: envelope, entries: entries, identity: identity, dek: dek)
    }
}
