import Foundation
import VaultCrypto

/// Opens vault blobs of either form, refusing older versions than this device has accepted and blobs whose writer
/// does not hold the vault secret this device pinned.
///
/// Order of checks: JSON and shape; the anchor and the counter against what was accepted (before any key is
/// touched, so a rolled-back or cross-served blob never prompts the user); the DEK; the header MACs; the vault's
/// AES-GCM tag; the writer's vault secret against the pinned anchor (FORMAT.md §8, §11.3). Nothing is stored
/// unless every check passed.
public struct VaultOpener: Sendable {
    /// A vault's plaintext and the state for sealing its next version.
    public struct OpenedVault: Sendable {
        /// The decrypted contents.
        public let plaintext: Data
        /// The state to hand to `VaultSealer` for the next version.
        public let state: VaultState
        /// Whether the entry it opened through proves its writer held that entry's key (FORMAT.md §11.2).
        let entryAuthenticatesWriter: Bool
        /// What the counter store remembers of this version (`SeenVersions`); nil for the seed form.
        let versionDigest: Data?
        /// SHA-256 of the blob text, which a pairing confirmation covers (FORMAT.md §11.4); only when opened for one.
        let confirmationDigest: Data?
    }

    /// What this reader has accepted for a vault.
    private struct Accepted {
        let counter: UInt64
        let anchor: VaultAnchor?
        /// Whether this reader accepted or wrote another blob at the counter the one at hand names.
        let otherBlobAtThisCounter: Bool
        /// The digest of the version this reader accepted or wrote just below the one at hand, which that one must
        /// name as `previous` (FORMAT.md §11.10).
        let digestJustBelow: Data?
    }

    /// How far above the highest accepted counter a blob may be (2^20): a writer adds 1 per version, so an honest
    /// chain gets there only after a million saves (about two years at the server's default 60 an hour), while a
    /// member, or a fork, that set a counter near 2^53 − 1 would end every later write (FORMAT.md §8 step 3).
    public static let maxCounterStep: UInt64 = 1 << 20

    private let counterStore: any CounterStore
    /// The largest blob text this opener parses (the server's `limits.max_blob_bytes`).
    public let maxBlobBytes: Int

    /// Creates an opener that remembers counters and anchors in `counterStore` and parses blobs of at most
    /// `maxBlobBytes` (1 MiB, the server's default limit).
    public init(counterStore: any CounterStore, maxBlobBytes: Int = 1_048_576) {
        self.counterStore = counterStore
        self.maxBlobBytes = maxBlobBytes
    }

    /// Parses and opens a blob with the first of `keys` that has an entry in it.
    ///
    /// - Throws: `VaultEnvelopeError` `.downgrade`, `.wrongVault` or `.rollback` before any key is used;
    ///   `.noMatchingKey`; what the key's `unwrap` throws (`.unwrapFailed`, `.invalidated`, ...);
    ///   `.recipientsAltered`, `.timestampAltered`, `.hintAltered`, `.counterAltered` for an edited header;
    ///   `.ciphertextAltered` when the AES-GCM tag does not verify; `.writerNotMember` when the writer does not hold
    ///   the pinned vault secret; `.unconfirmedVault` for a blob read through a public-key entry with no anchor
    ///   pinned, anchored or not (pair with `openForConfirmation` and `confirm`); and what `VaultEnvelope(parsing:)`
    ///   throws.
    public func open(_ blob: Data, vaultID: String, keys: [any KeyEncryptionKey]) async throws -> OpenedVault {
        let envelope = try VaultEnvelope(parsing: blob, maxBytes: maxBlobBytes)
        let accepted = try await acceptedState(vaultID, envelope: envelope)
        try Self.checkBeforeKeys(envelope, accepted)
        let opened = try await decrypt(envelope, vaultID: vaultID, keys: keys)
        try Self.checkNotForked(envelope, accepted)
        try await record(opened, anchor: try Self.anchorToPin(opened, accepted: accepted))
        return opened
    }

    /// Refuses a version that is not the one this reader accepted at its counter, or that does not name the version
    /// accepted just below it as `previous` (FORMAT.md §11.10). Called after the tag, so that an edited copy is named
    /// for what was edited: a valid second version is a fork.
    ///
    /// - Throws: `VaultEnvelopeError` `.forkDetected`.
    private static func checkNotForked(_ envelope: VaultEnvelope, _ accepted: Accepted) throws {
        guard let counter = envelope.counter else { return }
        if accepted.otherBlobAtThisCounter {
            throw VaultEnvelopeError(
                .forkDetected, "another version than the one this device accepted at counter \(counter): the server serves two")
        }
        if let below = accepted.digestJustBelow, envelope.previous != below {
            throw VaultEnvelopeError(
                .forkDetected,
                "version \(counter) does not follow the version \(counter - 1) this device accepted: the server serves a fork")
        }
    }

    /// Opens the blob a new device finds after an approval, storing nothing: the caller shows the user nothing of
    /// it until `confirm` has checked the code the approving device displays (FORMAT.md §11.4).
    ///
    /// - Throws: `VaultEnvelopeError` as `open(_:vaultID:keys:)` does (`.forkDetected` included); `.unconfirmedVault`
    ///   for a blob without a vault identity, which cannot be confirmed (the approver writes an anchored version first).
    public func openForConfirmation(_ blob: Data, vaultID: String, keys: [any KeyEncryptionKey]) async throws -> OpenedVault {
        let envelope = try VaultEnvelope(parsing: blob, maxBytes: maxBlobBytes)
        let accepted = try await acceptedState(vaultID, envelope: envelope)
        try Self.checkBeforeKeys(envelope, accepted)
        let opened = try await decrypt(envelope, vaultID: vaultID, keys: keys, confirmingBlob: blob)
        guard opened.state.identity != nil else {
            throw VaultEnvelopeError(.unconfirmedVault, "this version names no vault identity and cannot be confirmed")
        }
        // A member confirming again must not take in the branch that dropped a version it accepted.
        try Self.checkNotForked(envelope, accepted)
        try Self.checkCarriedAnchor(opened, accepted: accepted)
        return opened
    }

    /// Checks the code the user typed against the one `opened` gives for the entry the approver added, then pins the
    /// vault's anchor and accepts its counter.
    ///
    /// `entryKekID` is the `kek_id` of the entry the approver wrapped to (this device's pairing key). The code
    /// reaches this device from the approver's screen through the user, never through the server.
    /// - Throws: `VaultEnvelopeError` `.pairingMismatch` when the codes differ (nothing stored), and what `open`
    ///   throws when the stored state moved on meanwhile.
    public func confirm(_ opened: OpenedVault, code: String, entryKekID: String) async throws {
        guard let identity = opened.state.identity, let blobDigest = opened.confirmationDigest,
            ConstantTime.equal(
                Data(Self.digits(code).utf8),
                Data(Self.digits(identity.confirmationCode(forEntry: entryKekID, blobDigest: blobDigest)).utf8))
        else {
            throw VaultEnvelopeError(.pairingMismatch, "the code differs from the one this vault gives: nothing was stored")
        }
        // The store may have moved while the user typed; check again against what it holds now.
        let accepted = try await acceptedState(opened.state.vaultID, envelope: opened.state.envelope)
        try Self.checkBeforeKeys(opened.state.envelope, accepted)
        try Self.checkNotForked(opened.state.envelope, accepted)
        try Self.checkCarriedAnchor(opened, accepted: accepted)
        try await record(opened, anchor: identity.anchor)
    }

    /// Opens a kept older version the user asked for (to restore it), with every check but the counter's, which it
    /// neither compares nor advances: its content may only be saved again as a new version above the current one.
    ///
    /// With `current` (the identity of the vault as last synced) the version must name the same vault and carry,
    /// for its epoch, the secret `current` carries; a version from before anchors must have been opened through an
    /// entry that authenticates its writer.
    /// - Throws: `VaultEnvelopeError` as `open(_:vaultID:keys:)` does, except `.rollback`.
    public func openPastVersion(
        _ blob: Data, vaultID: String, keys: [any KeyEncryptionKey], checkedAgainst current: VaultIdentity?
    ) async throws -> OpenedVault {
        let envelope = try VaultEnvelope(parsing: blob, maxBytes: maxBlobBytes)
        if let current, let identifier = envelope.vaultIdentifier, identifier != current.vaultID {
            throw VaultEnvelopeError(.wrongVault, "that version belongs to another vault")
        }
        let opened = try await decrypt(envelope, vaultID: vaultID, keys: keys)
        guard let current else { return opened }
        // Any of the carried epochs' secrets would do below, and a revoked device knew those: so a version from before
        // the current epoch (the last revocation) counts only if this device accepted or wrote it itself.
        var seen = false
        if let digest = opened.versionDigest { seen = try await counterStore.hasSeen(digest, for: vaultID) }
        guard let identity = opened.state.identity else {
            guard opened.entryAuthenticatesWriter, seen else {
                throw VaultEnvelopeError(.downgrade, "that version predates the vault identity and this device never accepted it")
            }
            return opened
        }
        guard try Self.carries(current, theSecretOf: identity.anchor) else {
            throw VaultEnvelopeError(.unconfirmedVault, "that version's secret epoch \(identity.epoch) is not one this vault carries")
        }
        guard identity.epoch == current.epoch || seen else {
            throw VaultEnvelopeError(
                .downgrade,
                "that version is from epoch \(identity.epoch), before the last revocation (epoch \(current.epoch)), and this device "
                    + "never accepted it: a removed device could have written it")
        }
        return opened
    }

    private func acceptedState(_ vaultID: String, envelope: VaultEnvelope) async throws -> Accepted {
        var other = false
        var below: Data?
        if let counter = envelope.counter {
            if let known = try await counterStore.acceptedDigest(for: vaultID, counter: counter) {
                other = try SeenVersions.digest(of: envelope) != known
            }
            if counter > 1 { below = try await counterStore.acceptedDigest(for: vaultID, counter: counter - 1) }
        }
        return Accepted(
            counter: try await counterStore.highestCounter(for: vaultID), anchor: try await counterStore.anchor(for: vaultID),
            otherBlobAtThisCounter: other, digestJustBelow: below)
    }

    /// The refusals that need no key: anchor first, so a cross-served or pre-anchor blob is named as such.
    private static func checkBeforeKeys(_ envelope: VaultEnvelope, _ accepted: Accepted) throws(VaultEnvelopeError) {
        if let pinned = accepted.anchor {
            guard let identifier = envelope.vaultIdentifier, let epoch = envelope.epoch else {
                throw VaultEnvelopeError(.downgrade, "a blob without a vault identity after this vault's anchor was pinned")
            }
            guard identifier == pinned.vaultID else {
                throw VaultEnvelopeError(.wrongVault, "the blob names another vault than the one this device belongs to")
            }
            guard epoch >= pinned.epoch else {
                throw VaultEnvelopeError(.downgrade, "the blob's secret epoch \(epoch) is below \(pinned.epoch), already accepted")
            }
        }
        if let counter = envelope.counter, counter < accepted.counter {
            throw VaultEnvelopeError(.rollback, "blob counter \(counter) is below \(accepted.counter), already accepted for this vault")
        }
        if let counter = envelope.counter, accepted.counter > 0, counter - accepted.counter > maxCounterStep {
            throw VaultEnvelopeError(
                .counterJump, "blob counter \(counter) is more than \(maxCounterStep) above \(accepted.counter), the highest accepted")
        }
        if envelope.counter == nil, accepted.counter > 0 {
            throw VaultEnvelopeError(.rollback, "a seed-form blob (no counter) after counter \(accepted.counter) was accepted")
        }

    }

    /// The anchor to pin after `opened` passed every other check, or nil for a blob without an identity.
    ///
    /// A blob without an identity gets here only with nothing pinned (`checkBeforeKeys` refuses it otherwise), and is
    /// accepted only through an entry that proves its writer: anyone who knows a public key can write the rest.
    private static func anchorToPin(_ opened: OpenedVault, accepted: Accepted) throws(VaultEnvelopeError) -> VaultAnchor? {
        guard let identity = opened.state.identity else {
            guard opened.entryAuthenticatesWriter else {
                throw VaultEnvelopeError(
                    .unconfirmedVault,
                    "a version without a vault identity read through a public-key entry proves no writer: a member device "
                        + "must write the vault first, then confirm this device")
            }
            return nil
        }
        guard let pinned = accepted.anchor else {
            guard opened.entryAuthenticatesWriter else {
                throw VaultEnvelopeError(
                    .unconfirmedVault, "read through a public-key entry with no anchor pinned: confirm with a member device")
            }
            return identity.anchor
        }
        guard try carries(identity, theSecretOf: pinned) else {
            throw VaultEnvelopeError(
                .unconfirmedVault, "the blob no longer carries the secret of epoch \(pinned.epoch): confirm with a member device")
        }
        return identity.anchor
    }

    /// For a confirmation: a pinned epoch the blob still carries must match (`.writerNotMember`); one it no longer
    /// carries (more than 16 rotations behind) is what the confirmation code stands in for.
    private static func checkCarriedAnchor(_ opened: OpenedVault, accepted: Accepted) throws(VaultEnvelopeError) {
        guard let pinned = accepted.anchor, let identity = opened.state.identity else { return }
        _ = try carries(identity, theSecretOf: pinned)
    }

    /// Whether `identity` still carries the secret of `anchor`'s epoch; false when that epoch is no longer carried.
    ///
    /// - Throws: `VaultEnvelopeError` `.writerNotMember` when it carries another secret for that epoch.
    private static func carries(_ identity: VaultIdentity, theSecretOf anchor: VaultAnchor) throws(VaultEnvelopeError) -> Bool {
        guard let carried = identity.anchor(atEpoch: anchor.epoch) else { return false }
        guard carried.fingerprint == anchor.fingerprint else {
            throw VaultEnvelopeError(.writerNotMember, "the blob's writer does not hold this vault's secret")
        }
        return true
    }

    /// Pins the anchor, then raises the counter; every blob that gets here proved its writer (FORMAT.md §11.3).
    private func record(_ opened: OpenedVault, anchor: VaultAnchor?) async throws {
        let envelope = opened.state.envelope
        if let anchor { try await counterStore.pin(anchor, for: opened.state.vaultID) }
        if let counter = envelope.counter, envelope.macs != nil {
            try await counterStore.advance(opened.state.vaultID, to: counter)
            if let digest = opened.versionDigest { try await counterStore.remember(digest, counter: counter, for: opened.state.vaultID) }
        }
    }

    private func decrypt(
        _ envelope: VaultEnvelope, vaultID: String, keys: [any KeyEncryptionKey], confirmingBlob: Data? = nil
    ) async throws -> OpenedVault {
        let match = try await WrappedKey.unwrapDEK(from: envelope.entries, form: envelope.form, keys: keys)
        let dek = match.dek

        let plaintext: Data
        var identity: VaultIdentity?
        if let macs = envelope.macs, envelope.counter != nil {
            try HeaderAuthenticator(dek: dek).verify(macs: macs, header: envelope.header)
            plaintext = try Self.openVault(
                envelope.sealedBox, dek: dek, aad: try HeaderAuthenticator.additionalData(header: envelope.header))
            if let identifier = envelope.vaultIdentifier, let epoch = envelope.epoch, let sealed = envelope.sealedVaultSecret {
                identity = try VaultIdentity(vaultID: identifier, epoch: epoch, sealed: sealed, dek: dek)
            }
        } else {
            plaintext = try Self.openVault(envelope.sealedBox, dek: dek, aad: Data())
        }
        let authenticatesWriter = try WrapBinding.provesWriter(
            match.binding, entryAuthenticatesWriter: match.symmetric, identity: identity)
        return OpenedVault(
            plaintext: plaintext,
            state: VaultState(vaultID: vaultID, envelope: envelope, entries: envelope.entries, identity: identity, dek: dek),
            entryAuthenticatesWriter: authenticatesWriter,
            versionDigest: try SeenVersions.digest(of: envelope), confirmationDigest: confirmingBlob.map { Data(SHA256.hash(data: $0)) })
    }

    private static func openVault(_ box: AES.GCM.SealedBox, dek: SymmetricKey, aad: Data) throws(VaultEnvelopeError) -> Data {
        do {
            return try AES.GCM.open(box, using: dek, authenticating: aad)
        } catch {
            throw VaultEnvelopeError(.ciphertextAltered, "the vault ciphertext, IV or tag does not verify")
        }
    }

    private static func digits(_ text: String) -> String { text.filter { $0.isASCII && $0.isNumber } }
}
