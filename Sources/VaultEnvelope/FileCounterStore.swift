import Foundation
import VaultCore
import VaultCrypto
import VaultJSON

/// A counter store kept in one JSON file (mode 0600), replaced atomically: per vault its counter and pinned anchor,
/// `{"<vault>": {"counter": 7, "vault_id": "…", "epoch": 1, "fingerprint": "…"}}`.
///
/// With a sealing key the JSON is sealed under it (AES-256-GCM, the file's name as additional data), so that someone
/// who can write the file but holds no key can neither lower a counter nor move an anchor: an edited file is refused.
/// Files written before anchors existed hold `{"<vault>": 7}` and are read as counters without an anchor. One actor
/// per file: two stores on the same file in one process could each lose the other's update.
public actor FileCounterStore: CounterStore {
    private struct Record: Equatable {
        var counter: UInt64 = 0
        var anchor: VaultAnchor?
        var seen: [UInt64: Data] = [:]
    }

    /// The file.
    public let fileURL: URL
    private let sealingKey: SymmetricKey?
    private var records: [String: Record]

    /// Opens the store at `url`, sealed under `sealingKey` when one is given; a missing file is an empty store.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file is readable by others, unreadable, does not open under
    ///   `sealingKey` (altered, or sealed under another key), or is not a JSON object of counters and anchors.
    public init(fileURL url: URL, sealingKey: SymmetricKey? = nil) throws(VaultEnvelopeError) {
        fileURL = url
        self.sealingKey = sealingKey
        records = [:]
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        var bytes = try KeyFile.contents(of: url, maxBytes: 16 << 20)
        if let sealingKey {
            guard let box = try? AES.GCM.SealedBox(combined: bytes),
                let opened = try? AES.GCM.open(box, using: sealingKey, authenticating: Self.additionalData(url))
            else {
                throw VaultEnvelopeError(.keyStorage, "counter file \(url.lastPathComponent) was altered or sealed under another key")
            }
            bytes = opened
        }
        guard case .object(let members)? = try? JSONParser().parse(bytes) else {
            throw VaultEnvelopeError(.keyStorage, "counter file \(url.lastPathComponent) is not a JSON object")
        }
        for member in members {
            guard let record = Self.record(member.value) else {
                throw VaultEnvelopeError(.keyStorage, "counter file \(url.lastPathComponent) holds a non-counter")
            }
            records[member.key] = record
        }
    }

    /// The highest counter accepted for `vaultID`, or 0.
    public func highestCounter(for vaultID: String) -> UInt64 {
        records[vaultID]?.counter ?? 0
    }

    /// Keeps the larger of the stored value and `counter`, writing the file before returning.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file cannot be replaced; the stored value is then unchanged.
    public func advance(_ vaultID: String, to counter: UInt64) throws(VaultEnvelopeError) {
        var record = records[vaultID] ?? Record()
        guard counter > record.counter else { return }
        record.counter = counter
        try replace(vaultID, with: record)
    }

    /// The anchor pinned for `vaultID`, or nil.
    public func anchor(for vaultID: String) -> VaultAnchor? {
        records[vaultID]?.anchor
    }

    /// Pins `anchor` for `vaultID`, writing the file before returning.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file cannot be replaced; the stored anchor is then unchanged.
    public func pin(_ anchor: VaultAnchor, for vaultID: String) throws(VaultEnvelopeError) {
        var record = records[vaultID] ?? Record()
        guard record.anchor != anchor else { return }
        record.anchor = anchor
        try replace(vaultID, with: record)
    }

    /// The digest kept for `counter`, or nil.
    public func acceptedDigest(for vaultID: String, counter: UInt64) -> Data? { records[vaultID]?.seen[counter] }

    /// Whether `digest` is kept for `vaultID`.
    public func hasSeen(_ digest: Data, for vaultID: String) -> Bool { records[vaultID]?.seen.values.contains(digest) == true }

    /// Keeps `digest` for `counter` (the newest `seenBlobsKept`), writing the file before returning.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file cannot be replaced; the stored values are then unchanged.
    public func remember(_ digest: Data, counter: UInt64, for vaultID: String) throws(VaultEnvelopeError) {
        var record = records[vaultID] ?? Record()
        guard record.seen[counter] != digest else { return }
        record.seen = SeenVersions.adding(digest, counter: counter, to: record.seen)
        try replace(vaultID, with: record)
    }

    /// Forgets `vaultID`'s counter and anchor, writing the file before returning.
    ///
    /// - Throws: `VaultEnvelopeError` `.keyStorage` if the file cannot be replaced; the stored values are then unchanged.
    public func forget(_ vaultID: String) throws(VaultEnvelopeError) {
        guard records[vaultID] != nil else { return }
        try replace(vaultID, with: nil)
    }

    private func replace(_ vaultID: String, with record: Record?) throws(VaultEnvelopeError) {
        var updated = records
        updated[vaultID] = record
        let json = JSONValue.object(updated.sorted { $0.key < $1.key }.map { ($0.key, Self.json($0.value)) })
        var bytes = JSONSerializer.data(of: json)
        if let sealingKey {
            guard let sealed = try? AES.GCM.seal(bytes, using: sealingKey, authenticating: Self.additionalData(fileURL)).combined else {
                throw VaultEnvelopeError(.cryptoFailure, "sealing the counter file failed")
            }
            bytes = sealed
        }
        try OwnerOnlyFile.replace(fileURL, with: [UInt8](bytes))
        records = updated
    }

    private static func additionalData(_ url: URL) -> Data { Data(url.lastPathComponent.utf8) }

    private static func json(_ record: Record) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("counter", .integer(Int64(record.counter)))]
        if let anchor = record.anchor {
            members += [
                ("vault_id", .string(anchor.vaultID)), ("epoch", .integer(Int64(anchor.epoch))),
                ("fingerprint", .string(Base64URL.encode(anchor.fingerprint))),
            ]
        }
        if !record.seen.isEmpty {
            let seen = record.seen.sorted { $0.key < $1.key }.map {
                JSONValue.object([("counter", .integer(Int64($0.key))), ("digest", .string(Base64URL.encode($0.value)))])
            }
            members.append(("seen", .array(seen)))
        }
        return .object(members)
    }

    private static func record(_ value: JSONValue) -> Record? {
        if let counter = value.integerValue { return counter >= 0 ? Record(counter: UInt64(counter)) : nil }
        guard let counter = value["counter"]?.integerValue, counter >= 0 else { return nil }
        var seen: [UInt64: Data] = [:]
        var items: [JSONValue] = []
        if let listed = value["seen"] {
            guard case .array(let array) = listed else { return nil }
            items = array
        }
        for item in items {
            guard let at = item["counter"]?.integerValue, at > 0,
                let digest = item["digest"]?.stringValue.flatMap(Base64URL.decode), digest.count == 32
            else { return nil }
            seen[UInt64(at)] = digest
        }
        guard value["vault_id"] != nil else { return Record(counter: UInt64(counter), seen: seen) }
        guard let vaultID = value["vault_id"]?.stringValue, let epoch = value["epoch"]?.integerValue, epoch > 0,
            let fingerprint = value["fingerprint"]?.stringValue.flatMap(Base64URL.decode), fingerprint.count == 32
        else { return nil }
        return Record(
            counter: UInt64(counter), anchor: VaultAnchor(vaultID: vaultID, epoch: UInt64(epoch), fingerprint: fingerprint),
            seen: seen)
    }
}
