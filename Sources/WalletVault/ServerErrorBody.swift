import Foundation

/// The `{"error", "message", ...}` body of a server error, read leniently.
struct ServerErrorBody {
    let code: String
    let fields: [String: Any]

    init(_ data: Data) {
        fields = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        code = fields["error"] as? String ?? "unknown"
    }

    func string(_ name: String) -> String? { fields[name] as? String }
}
