/// The actions of `/wallet-backup.ashx` and the method each takes.
public enum BackupAction: String, CaseIterable, Sendable {
    /// D2: store a blob (`POST`, the blob as the body).
    case save
    /// D3: the current blob, or a kept version with `sync_id` (`GET`).
    case load
    /// The kept versions, newest first (`GET`).
    case versions
    /// Erase the blob and its history (`POST`; right to erasure).
    case delete

    /// The method a client sends.
    public var method: String {
        switch self {
        case .save, .delete: "POST"
        case .load, .versions: "GET"
        }
    }

    /// The methods the server accepts (`HEAD` wherever `GET` is).
    public var allowedMethods: [String] {
        method == "GET" ? ["GET", "HEAD"] : [method]
    }
}
