import Foundation

/// Remembers, per vault, what a reader has accepted: the highest `counter` (so an older blob is refused) and the
/// pinned anchor (so a blob from a writer that does not hold the vault secret is refused; FORMAT.md §11.2).
///
/// Implementations must never lower a stored counter: `advance` keeps the maximum.
public protocol CounterStore: Sendable {
    /// The highest counter accepted for `vaultID`, or 0 if none.
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func highestCounter(for vaultID: String) async throws -> UInt64

    /// Records `counter` for `vaultID` if it is higher than the stored value.
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func advance(_ vaultID: String, to counter: UInt64) async throws

    /// The anchor pinned for `vaultID`, or nil if none is.
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func anchor(for vaultID: String) async throws -> VaultAnchor?

    /// Pins `anchor` for `vaultID`, replacing the one pinned before; the opener checks before it calls this.
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func pin(_ anchor: VaultAnchor, for vaultID: String) async throws

    /// Forgets `vaultID`'s counter and anchor, for a vault its user erased from the server; the only way a counter
    /// goes down.
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func forget(_ vaultID: String) async throws

    /// The SHA-256 of the blob accepted or written at `counter` for `vaultID`, if it is among those kept.
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func acceptedDigest(for vaultID: String, counter: UInt64) async throws -> Data?

    /// Whether a blob with `digest` was accepted or written for `vaultID` (among those kept).
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func hasSeen(_ digest: Data, for vaultID: String) async throws -> Bool

    /// Remembers the SHA-256 of a blob accepted or written at `counter`; the newest `seenBlobsKept` are kept.
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func remember(_ digest: Data, counter: UInt64, for vaultID: String) async throws
}

/// How many accepted blobs' digests a store keeps per vault: more than the server's history (10 by default).
public let seenBlobsKept = 64
