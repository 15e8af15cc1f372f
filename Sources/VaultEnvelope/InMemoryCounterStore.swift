import Foundation

/// A counter store that forgets on exit: for tests and for readers that cannot persist anything.
public actor InMemoryCounterStore: CounterStore {
    private var counters: [String: UInt64] = [:]
    private var anchors: [String: VaultAnchor] = [:]
    private var seen: [String: [UInt64: Data]] = [:]

    /// Creates an empty store.
    public init() {}

    /// The highest counter accepted for `vaultID`, or 0.
    public func highestCounter(for vaultID: String) -> UInt64 {
        counters[vaultID, default: 0]
    }

    /// Keeps the larger of the stored value and `counter`.
    public func advance(_ vaultID: String, to counter: UInt64) {
        counters[vaultID] = max(counters[vaultID, default: 0], counter)
    }

    /// The anchor pinned for `vaultID`, or nil.
    public func anchor(for vaultID: String) -> VaultAnchor? {
        anchors[vaultID]
    }

    /// Pins `anchor` for `vaultID`.
    public func pin(_ anchor: VaultAnchor, for vaultID: String) {
        anchors[vaultID] = anchor
    }

    /// Forgets `vaultID`'s counter and anchor.
    public func forget(_ vaultID: String) {
        counters[vaultID] = nil
        anchors[vaultID] = nil
        seen[vaultID] = nil
    }

    /// The digest kept for `counter`, or nil.
    public func acceptedDigest(for vaultID: String, counter: UInt64) -> Data? { seen[vaultID]?[counter] }

    /// Whether `digest` is kept for `vaultID`.
    public func hasSeen(_ digest: Data, for vaultID: String) -> Bool { seen[vaultID]?.values.contains(digest) == true }

    /// Keeps `digest` for `counter`, dropping the lowest counters past `seenBlobsKept`.
    public func remember(_ digest: Data, counter: UInt64, for vaultID: String) {
        seen[vaultID] = SeenVersions.adding(digest, counter: counter, to: seen[vaultID] ?? [:])
    }
}
