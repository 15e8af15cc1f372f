import Foundation
import VaultCore
import VaultEnvelope
import VaultJSON

/// Checks a vault blob offline exactly as the server's save does, and describes its header.
///
/// The order is the server's: the size cap first (decided before reading), then JSON with duplicate member names
/// refused as a shape error and nesting capped at 64, then the seed's shape rules (`VaultShapeValidator`). It never
/// shows key material: `dek_cipher`, `cipher`, salts and public keys appear only as sizes or not at all.
public struct BlobInspector: Sendable {
    /// The server's verdict.
    public enum Verdict: Sendable, Equatable {
        /// The server would store it.
        case accepted
        /// The server would refuse it with this HTTP status, error code and detail.
        case refused(status: Int, code: String, detail: String)
    }

    /// What inspecting a blob found.
    public struct Report: Sendable {
        /// The server's verdict.
        public let verdict: Verdict
        /// The header, one line per fact, when the server would accept it.
        public let lines: [String]
    }

    /// The server's size cap (`limits.max_blob_bytes`).
    public var maxBlobBytes: Int

    /// Creates an inspector for a server with the default 1 MiB cap.
    public init(maxBlobBytes: Int = 1_048_576) {
        self.maxBlobBytes = maxBlobBytes
    }

    /// Inspects `blob`.
    public func inspect(_ blob: Data) -> Report {
        guard blob.count <= maxBlobBytes else {
            return Report(
                verdict: .refused(
                    status: 413, code: "blob_too_large",
                    detail: "\(blob.count) bytes, the limit is \(maxBlobBytes)"), lines: [])
        }
        let json: JSONValue
        do { json = try JSONParser(maxDepth: 64).parse(blob) } catch {
            if error.code == .duplicateKey {
                return Report(
                    verdict: .refused(status: 400, code: "invalid_vault_shape", detail: "a member name is repeated (\(error.reason))"),
                    lines: [])
            }
            return Report(
                verdict: .refused(status: 400, code: "invalid_json", detail: "the body is not valid JSON: \(error.reason)"),
                lines: [])
        }
        let header: VaultBlobHeader
        do { header = try VaultShapeValidator().validate(json) } catch {
            return Report(verdict: .refused(status: 400, code: "invalid_vault_shape", detail: error.detail), lines: [])
        }
        return Report(verdict: .accepted, lines: describe(json, header: header, size: blob.count, blob: blob))
    }

    private func describe(_ json: JSONValue, header: VaultBlobHeader, size: Int, blob: Data) -> [String] {
        var lines = ["size        \(size) bytes"]
        if let counter = json["counter"] {
            lines.append("form        extended (counter \(Self.text(counter)), dek_seals \(json["dek_seals"].map(Self.text) ?? "absent"))")
        } else {
            lines.append("form        seed (no counter: header not authenticated, no rollback protection)")
        }
        lines.append("updatedUtc  \(header.updatedUtc)")
        lines.append("hint        \(header.hint.map { "\"\($0)\"" } ?? "(none)")")
        lines.append("cipher      \(header.cipherByteCount) bytes (the encrypted vault)")
        guard case .array(let entries)? = json["wrappedDeks"] else { return lines }
        lines.append("entries     \(entries.count)")
        for (index, entry) in entries.enumerated() {
            var facts = ["kek_id \(entry["kek_id"]?.stringValue ?? "?")"]
            facts.append("alg \(entry["alg"]?.stringValue ?? "(seed form)")")
            if let kdf = entry["kdf"]?.stringValue {
                facts.append(
                    kdf == "Argon2id"
                        ? "kdf Argon2id m=\(entry["m"].map(Self.text) ?? "?") t=\(entry["t"].map(Self.text) ?? "?") p=\(entry["p"].map(Self.text) ?? "?")"
                        : "kdf \(kdf)")
            }
            if let label = entry["label"]?.stringValue { facts.append("label \"\(label)\"") }
            if let created = entry["created"]?.stringValue { facts.append("created \(created)") }
            let wrapped = entry["dek_cipher"]?.stringValue.flatMap(Base64URL.decode)?.count ?? 0
            facts.append("dek_cipher \(wrapped) bytes")
            lines.append("  \(index + 1). " + facts.joined(separator: "  "))
        }
        // The server stops at the shape; a reader also checks the extended form's members before any key is used.
        do {
            _ = try VaultEnvelope(parsing: blob)
            lines.append("reader      the format checks pass (keys, MACs and ciphertext are checked only when opened)")
        } catch {
            lines.append("reader      readers would refuse it: \(error.code.rawValue): \(error.reason)")
        }
        return lines
    }

    private static func text(_ value: JSONValue) -> String {
        switch value {
        case .integer(let number): "\(number)"
        case .string(let text): "\"\(text)\""
        default: value.typeName
        }
    }
}
