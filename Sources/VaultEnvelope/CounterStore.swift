/// Remembers, per vault, the highest `counter` a reader has accepted, so an older blob is refused.
///
/// Implementations must never lower a stored value: `advance` keeps the maximum.
public protocol CounterStore: Sendable {
    /// The highest counter accepted for `vaultID`, or 0 if none.
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func highestCounter(for vaultID: String) async throws -> UInt64

    /// Records `counter` for `vaultID` if it is higher than the stored value.
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func advance(_ vaultID: String, to counter: UInt64) async throws
    /// Forgets `vaultID`'s counter, for a vault its user erased from the server; the only way a counter goes down.
    ///
    /// - Throws: whatever the storage throws (`VaultEnvelopeError` `.keyStorage` for the file store).
    func forget(_ vaultID: String) async throws
}
