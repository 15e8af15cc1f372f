import Foundation
import VaultCore
import VaultJSON

/// A counter store kept in one JSON file (`{"<vault id>": <counter>, ...}`, mode 0600), replaced atomically.
///
/// One actor per file: two stores on the same file in one process could each lose the other's update.
public actor FileCounterStore: CounterStore {
    /// The file.
    public let fileURL: URL
    private var counters: [String: UInt64]

    /// Opens the store at `url`; a missing file is an empty store.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file is readable by others, unreadable, or not a JSON
    ///   object of positive integers.
    public init(fileURL url: URL) throws(VaultEnvelopeError) {
        fileURL = url
        counters = [:]
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        let bytes = try KeyFile.contents(of: url, maxBytes: 16 << 20)
        guard case .object(let members)? = try? JSONParser().parse(bytes) else {
            throw VaultEnvelopeError(.keyStorage, "counter file \(url.lastPathComponent) is not a JSON object")
        }
        for member in members {
            guard let value = member.value.integerValue, value >= 0 else {
                throw VaultEnvelopeError(.keyStorage, "counter file \(url.lastPathComponent) holds a non-counter")
            }
            counters[member.key] = UInt64(value)
        }
    }

    /// The highest counter accepted for `vaultID`, or 0.
    public func highestCounter(for vaultID: String) -> UInt64 {
        counters[vaultID, default: 0]
    }

    /// Keeps the larger of the stored value and `counter`, writing the file before returning.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file cannot be replaced; the stored value is then unchanged.
    public func advance(_ vaultID: String, to counter: UInt64) throws(VaultEnvelopeError) {
        guard counter > counters[vaultID, default: 0] else { return }
        var updated = counters
        updated[vaultID] = counter
        try replace(with: updated)
    }

    /// Forgets `vaultID`'s counter, writing the file before returning.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file cannot be replaced; the stored value is then unchanged.
    public func forget(_ vaultID: String) throws(VaultEnvelopeError) {
        guard counters[vaultID] != nil else { return }
        var updated = counters
        updated[vaultID] = nil
        try replace(with: updated)
    }

    private func replace(with updated: [String: UInt64]) throws(VaultEnvelopeError) {
        let json = JSONValue.object(updated.sorted { $0.key < $1.key }.map { ($0.key, .integer(Int64($0.value))) })
        try OwnerOnlyFile.replace(fileURL, with: [UInt8](JSONSerializer.data(of: json)))
        counters = updated
    }
}
