import Foundation
import VaultCore
import VaultCrypto

/// Writes vault blobs in the extended form: creates vaults, seals new versions, enrolls and revokes recipients,
/// rotates the DEK.
///
/// One sealer per device: its `hint` names the device in every blob it writes. Every seal uses a fresh random
/// 96-bit IV; the DEK is rotated once it has made `dekRotationThreshold` seals, far below the 2^32 that NIST
/// SP 800-38D allows for random IVs, and whenever a seed-form vault is first rewritten (nobody counted its seals).
public struct VaultSealer: Sendable {
    /// A key to wrap the DEK for, with the label its entry carries.
    public struct Recipient: Sendable {
        /// The key (or public key) to wrap for.
        public let key: any KeyWrapping
        /// The entry's label, e.g. "Pixel 8" or "Recovery code".
        public let label: String

        /// Pairs a key with a label.
        public init(_ key: any KeyWrapping, label: String) {
            self.key = key
            self.label = label
        }
    }

    /// A freshly sealed version: the bytes to upload and the state to keep for the next seal.
    public struct SealedVault: Sendable {
        /// The blob's JSON text, ready for `POST /wallet-backup.ashx?action=save`.
        public let blob: Data
        /// The state for the next seal.
        public let state: VaultState
        /// What happened to the entries if this seal rotated the DEK.
        public let rotation: DEKRotation?
        /// The identity of the version this one replaces (nil for a new vault or one from before anchors): its write
        /// key proves to the server that the writer may replace it (FORMAT.md §11.8).
        public let basis: VaultIdentity?
    }

    /// The server's body limit (its `limits.max_blob_bytes`, 1 MiB by default); larger blobs are refused here.
    public let maxBlobBytes: Int
    /// Seals per DEK after which the next seal rotates it (2^24 by default).
    public let dekRotationThreshold: UInt64
    /// The `hint` written into blobs (the seed writes the device name), or nil for none.
    public let hint: String?
    private let counterStore: any CounterStore
    private let clock: @Sendable () -> UTCTimestamp

    /// Creates a sealer.
    ///
    /// `counterStore` should be the one the device's `VaultOpener` uses, so a new version's counter is above every
    /// counter the device has accepted; `clock` supplies `updatedUtc` and `created` (the system clock by default).
    public init(
        counterStore: any CounterStore,
        hint: String? = nil,
        maxBlobBytes: Int = 1_048_576,
        dekRotationThreshold: UInt64 = 1 << 24,
        clock: @escaping @Sendable () -> UTCTimestamp = {
            UTCTimestamp(millisecondsSinceEpoch: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
        }
    ) {
        self.counterStore = counterStore
        self.hint = hint
        self.maxBlobBytes = maxBlobBytes
        self.dekRotationThreshold = dekRotationThreshold
        self.clock = clock
    }

    /// Creates a vault: a fresh DEK wrapped for every recipient, the first version sealed with it.
    ///
    /// - Throws: `VaultEnvelopeError` `.noRecipients` for an empty list or two recipients with one `kek_id`,
    ///   `.malformed` for a label or hint over 256 characters, `.blobTooLarge` naming the blob's size and the limit,
    ///   or what a recipient's `wrap` throws.
    public func create(_ plaintext: Data, vaultID: String, recipients: [Recipient]) async throws -> SealedVault {
        try await create(plaintext, vaultID: vaultID, recipients: recipients, identity: .create())
    }

    /// `create` with a given identity: what a forger who picked its own vault secret writes, for the tests that
    /// show readers refuse it.
    func create(_ plaintext: Data, vaultID: String, recipients: [Recipient], identity: VaultIdentity) async throws -> SealedVault {
        let dek = SymmetricKey(size: .bits256)
        let now = clock()
        var entries: [WrappedKey] = []
        for recipient in recipients {
            entries.append(
                try await recipient.key.wrap(WrapBinding.payload(dek, for: recipient.key, in: identity))
                    .labeled(recipient.label, created: now))
        }
        return try await write(
            plaintext, dek: dek, entries: entries, identity: identity, vaultID: vaultID, after: 0, dekSeals: 1, rotation: nil,
            basis: nil, previous: nil)
    }

    /// Seals the next version of a vault with its DEK and pending entries, rotating the DEK first when it is due.
    ///
    /// `keys` and `allowingPrompts` are used only for a rotation, as in `rotateDEK`.
    /// - Throws: `VaultEnvelopeError` `.blobTooLarge` naming the blob's size and the limit; during a rotation, what
    ///   `rotateDEK` throws.
    public func seal(
        _ plaintext: Data, over state: VaultState, keys: [any KeyWrapping] = [], allowingPrompts: Bool = false
    ) async throws -> SealedVault {
        guard state.envelope.form == .extended, state.dekSeals < dekRotationThreshold else {
            return try await rotateDEK(plaintext, over: state, keys: keys, allowingPrompts: allowingPrompts)
        }
        // A vault from before anchors gets its identity at its first write here (FORMAT.md §11.7).
        return try await write(
            plaintext, dek: state.dek, entries: state.entries, identity: state.identity ?? .create(), vaultID: state.vaultID,
            after: state.counter, dekSeals: state.dekSeals + 1, rotation: nil, basis: state.identity,
            previous: try SeenVersions.digest(of: state.envelope)
        )
    }

    /// Replaces the DEK: a fresh one, re-wrapped for every entry whose key can wrap, and the vault re-encrypted.
    ///
    /// An entry is re-wrapped with the key in `keys` that has its `kek_id`, else with the public key its `jwk`
    /// names; keys that need their holder are used only when `allowingPrompts` is true. Entries that cannot be
    /// re-wrapped are left out and listed in `SealedVault.rotation`. After a revocation pass `rotatingVaultSecret`,
    /// so the revoked holder, who knows the current vault secret, cannot write anything the members accept once
    /// they have read this version (FORMAT.md §11.5).
    /// - Throws: `VaultEnvelopeError` `.noRecipients` if no entry could be re-wrapped, `.blobTooLarge`.
    public func rotateDEK(
        _ plaintext: Data, over state: VaultState, keys: [any KeyWrapping], allowingPrompts: Bool = false,
        rotatingVaultSecret: Bool = false
    ) async throws -> SealedVault {
        let dek = SymmetricKey(size: .bits256)
        let now = clock()
        // The new identity first: the symmetric entries are bound to the epoch they are written for.
        let identity = state.identity.map { rotatingVaultSecret ? $0.rotated() : $0 } ?? .create()
        var entries: [WrappedKey] = []
        var skipped: [DEKRotation.Skipped] = []
        for entry in state.entries {
            let label = entry.label ?? state.envelope.hint ?? ""
            func skip(_ reason: DEKRotation.Reason) {
                skipped.append(DEKRotation.Skipped(kekID: entry.kekID, label: label, reason: reason))
            }
            // Seed entries may share a kek_id (Android's constant `vault-kek`): one key re-wraps once, and the
            // entries of the other devices that used the same id are reported, since their keys are not here.
            guard !entries.contains(where: { $0.kekID == entry.kekID }) else {
                skip(.keyNotAvailable)
                continue
            }
            guard let key = keys.first(where: { $0.kekID == entry.kekID }) ?? PublicKeyRecipient(recipientOf: entry) else {
                skip(.keyNotAvailable)
                continue
            }
            guard key.canWrapWithoutHolder || allowingPrompts else {
                skip(.needsHolder)
                continue
            }
            do {
                entries.append(
                    try await key.wrap(WrapBinding.payload(dek, for: key, in: identity)).labeled(label, created: entry.created ?? now))
            } catch let error as VaultEnvelopeError {
                skip(.failed(error.code))
            }
        }
        let rotation = DEKRotation(rewrapped: entries.map(\.kekID), skipped: skipped)
        return try await write(
            plaintext, dek: dek, entries: entries, identity: identity, vaultID: state.vaultID, after: state.counter,
            dekSeals: 1, rotation: rotation, basis: state.identity, previous: try SeenVersions.digest(of: state.envelope)
        )
    }

    /// Wraps the vault's DEK for one more key; the entry is written by the next seal.
    ///
    /// For a device, pass its `PublicKeyRecipient`: enrolling needs only the public key it shows.
    /// - Throws: `VaultEnvelopeError` `.noRecipients` if the key already has an entry, or what its `wrap` throws.
    public func enroll(_ key: any KeyWrapping, label: String, in state: VaultState) async throws -> VaultState {
        guard !state.entries.contains(where: { $0.kekID == key.kekID }) else {
            throw VaultEnvelopeError(.noRecipients, "the vault already has an entry for this kek_id")
        }
        let payload = WrapBinding.payload(state.dek, for: key, in: state.identity)
        return state.with(entries: state.entries + [try await key.wrap(payload).labeled(label, created: clock())])
    }

    /// Drops the entry of `kekID`; the next seal leaves it out.
    ///
    /// The revoked holder may have kept the DEK: follow with `rotateDEK` so later versions are out of its reach.
    /// - Throws: `VaultEnvelopeError` `.noRecipients` if that was the last entry or there is no such entry.
    public func revoke(kekID: String, in state: VaultState) throws(VaultEnvelopeError) -> VaultState {
        let remaining = state.entries.filter { $0.kekID != kekID }
        guard remaining.count < state.entries.count else {
            throw VaultEnvelopeError(.noRecipients, "the vault has no entry for this kek_id")
        }
        guard !remaining.isEmpty else { throw VaultEnvelopeError(.noRecipients, "cannot revoke the last entry") }
        return state.with(entries: remaining)
    }

    /// Records that the server accepted `sealed`: pins its anchor, then its counter, so this device refuses any
    /// older version and any blob from a writer without the vault secret from now on.
    ///
    /// Call it after a successful upload; until then a failed upload leaves the counter store unchanged.
    /// - Throws: what the counter store throws.
    public func markAccepted(_ sealed: SealedVault) async throws {
        try await markAccepted(sealed.state)
    }

    /// Records that the server accepted the version whose state is `state`, as `markAccepted(_:)` does for a sealed
    /// one: for a version this device sealed and keeps the exact bytes of, opened again because the answer to its
    /// upload was lost.
    ///
    /// - Throws: what the counter store throws.
    public func markAccepted(_ state: VaultState) async throws {
        if let identity = state.identity { try await counterStore.pin(identity.anchor, for: state.vaultID) }
        try await counterStore.advance(state.vaultID, to: state.counter)
        if let digest = try SeenVersions.digest(of: state.envelope) {
            try await counterStore.remember(digest, counter: state.counter, for: state.vaultID)
        }
    }

    private func write(
        _ plaintext: Data, dek: SymmetricKey, entries: [WrappedKey], identity: VaultIdentity, vaultID: String,
        after previousCounter: UInt64, dekSeals: UInt64, rotation: DEKRotation?, basis: VaultIdentity?, previous: Data?
    ) async throws -> SealedVault {
        guard !entries.isEmpty else { throw VaultEnvelopeError(.noRecipients, "no entry can unwrap the DEK") }
        guard Set(entries.map(\.kekID)).count == entries.count else {
            throw VaultEnvelopeError(.noRecipients, "two entries have the same kek_id")
        }
        // Readers (and, for the hint, the server) refuse longer texts; refuse them here rather than write them.
        // Both count Unicode code points, as JSON Schema's maxLength does, not grapheme clusters.
        guard entries.allSatisfy({ ($0.label ?? "").unicodeScalars.count <= WrappedKey.maxLabelCharacters }),
            (hint ?? "").unicodeScalars.count <= WrappedKey.maxLabelCharacters
        else {
            throw VaultEnvelopeError(.malformed, "labels and the hint have at most \(WrappedKey.maxLabelCharacters) code points")
        }
        // Nor a set of passphrase entries a reader would refuse to derive for (FORMAT.md §7.3).
        try Argon2idCosts.checkOpenBudget(
            entries.compactMap { entry in
                guard case .a256kw(.passphrase(_, let costs)) = entry.scheme else { return nil }
                return costs
            })
        let counter = max(previousCounter, try await counterStore.highestCounter(for: vaultID)) + 1
        let now = clock()
        let sealedVaultSecret = try identity.sealed(dek: dek)
        var headerMembers = VaultEnvelope.unauthenticatedHeader(
            entries: entries, updatedAt: now, hint: hint, counter: counter, dekSeals: dekSeals, identity: identity,
            sealedVaultSecret: sealedVaultSecret, previous: previous)
        let macs = try HeaderAuthenticator(dek: dek).macs(for: .object(headerMembers))
        headerMembers.append(("macs", .string(Base64URL.encode(macs))))
        let sealedBox: AES.GCM.SealedBox
        do {
            sealedBox = try AES.GCM.seal(
                plaintext, using: dek, authenticating: try HeaderAuthenticator.additionalData(header: .object(headerMembers)))
        } catch {
            throw VaultEnvelopeError(.cryptoFailure, "vault AES-GCM seal failed: \(CryptoError(classifying: error))")
        }
        let envelope = VaultEnvelope(
            entries: entries, sealedBox: sealedBox, updatedAt: now, hint: hint, counter: counter, dekSeals: dekSeals,
            identity: identity, sealedVaultSecret: sealedVaultSecret, previous: previous, macs: macs, headerMembers: headerMembers
        )
        let blob = envelope.encoded()
        guard blob.count <= maxBlobBytes else {
            throw VaultEnvelopeError(
                .blobTooLarge, "the blob would be \(blob.count) bytes; the server accepts at most \(maxBlobBytes) bytes")
        }
        return SealedVault(
            blob: blob, state: VaultState(vaultID: vaultID, envelope: envelope, entries: entries, identity: identity, dek: dek),
            rotation: rotation, basis: basis)
    }
}
