import Foundation

/// The fields of an `application/x-www-form-urlencoded` body; a repeated name keeps its first value.
///
/// A field whose percent escapes do not decode to UTF-8 is dropped, so it reads as missing.
public struct FormBody: Sendable {
    private var fields: [String: String] = [:]

    /// Reads the fields of a form body.
    public init(_ body: Data) {
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            // '+' means space in this media type, unlike in URLs.
            let decoded = parts.map { $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decoded[0], let value = decoded.count > 1 ? decoded[1] : "", fields[name] == nil else { continue }
            fields[name] = value
        }
    }

    /// The first value of the field `name`, or nil when the body has none.
    public subscript(name: String) -> String? { fields[name] }
}
