import VaultCore

/// What a save must find before it may replace the stored blob, as the client sends it and the server reads it.
public enum SavePrecondition: Sendable, Hashable {
    /// Replace whatever is there (the seed's behaviour; no header).
    case none
    /// Replace only if the current version is one of these (`If-Match: "<sync_id>", ...`).
    case matches([UTCTimestamp])
    /// Replace only if something is stored (`If-Match: *`).
    case exists
    /// Store only if nothing is stored yet (`If-None-Match: *`).
    case absent

    /// Replace only the version `syncID` names; a `syncID` that is no sync ID matches nothing, so the save is
    /// refused with a 409 rather than overwriting.
    public static func ifMatch(syncID: String) -> SavePrecondition {
        .matches(UTCTimestamp(rfc3339: syncID).map { [$0] } ?? [])
    }

    /// The request header carrying this precondition, nil for `.none`.
    public var header: (name: String, value: String)? {
        switch self {
        case .none: nil
        case .matches(let versions): ("If-Match", versions.map(EntityTag.header(for:)).joined(separator: ", "))
        case .exists: ("If-Match", "*")
        case .absent: ("If-None-Match", "*")
        }
    }

    /// Reads a save's precondition from its `If-Match` and `If-None-Match` values (`If-Match` wins when both are sent).
    ///
    /// - Throws: `WireErrorCode.invalidPrecondition` when `If-None-Match` is anything but `*`.
    public init(ifMatch: String?, ifNoneMatch: String?) throws(WireErrorCode) {
        if let ifMatch {
            self = EntityTag.list(ifMatch).map { .matches($0) } ?? .exists
        } else if let ifNoneMatch {
            guard EntityTag.list(ifNoneMatch) == nil else { throw .invalidPrecondition }
            self = .absent
        } else {
            self = .none
        }
    }

    /// Whether a save may proceed given the currently stored version.
    public func admits(current: UTCTimestamp?) -> Bool {
        switch self {
        case .none: true
        case .matches(let versions): current.map(versions.contains) ?? false
        case .exists: current != nil
        case .absent: current == nil
        }
    }
}

extension WireErrorCode: Error {}
