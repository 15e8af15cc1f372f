import CYajl
import Foundation
import VaultCore

/// Parses untrusted JSON into a `JSONValue` with yajl, refusing duplicate member names.
///
/// yajl's lexer is several times faster than jansson's on the large strings vault blobs carry.
/// `JSONTreeBuilder` adds what yajl does not check itself (repeated names, nesting, strict UTF-8,
/// unpaired surrogate escapes); Foundation's parser would instead collapse duplicate keys silently.
public struct JSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted; the top level is depth 1.
    public var maxDepth: Int

    /// Creates a parser with a nesting limit.
    public init(maxDepth: Int = 64) {
        self.maxDepth = maxDepth
    }

    /// Parses a complete JSON text (any value at the top level).
    ///
    /// - Throws: `JSONParseError` for syntax errors, duplicate member names and nesting past `maxDepth`.
    public func parse(_ bytes: some ContiguousBytes) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBytes { input in
            Result { () throws(JSONParseError) in try parse(input) }
        }.get()
    }

    private func parse(_ input: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        // yajl takes vertical tab and form feed for whitespace; JSON does not, and neither may stand
        // raw inside a string, so either byte anywhere refuses the text.
        if let base = input.baseAddress {
            for byte: Int32 in [0x0B, 0x0C] {
                if let found = memchr(base, byte, input.count) {
                    throw JSONParseError(.syntax, "not valid JSON at byte \(base.distance(to: found)) (control character)")
                }
            }
        }
        var builder = JSONTreeBuilder(input: input, maxDepth: maxDepth)
        var callbacks = JSONTreeBuilder.callbacks
        // yajl keeps both addresses, so the handle must not outlive these closures.
        return try withUnsafeMutablePointer(to: &builder) { builder throws(JSONParseError) in
            try withUnsafePointer(to: &callbacks) { table throws(JSONParseError) in
                guard let handle = yajl_alloc(table, nil, builder) else {
                    throw JSONParseError(.syntax, "yajl could not allocate a parser")
                }
                defer { yajl_free(handle) }
                builder.pointee.handle = handle
                // yajl's defaults are the strict ones: no comments, no trailing garbage, no multiple
                // values, UTF-8 checked in strings. yajl_config is variadic and Swift cannot call it.
                var status = yajl_parse(handle, input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count)
                var position = Int(yajl_get_bytes_consumed(handle))
                if status == yajl_status_ok {
                    // A number at the very end is only complete once yajl knows no digit follows.
                    status = yajl_complete_parse(handle)
                    position = input.count
                }
                if status == yajl_status_client_canceled, let failure = builder.pointee.failure {
                    throw failure
                }
                guard status == yajl_status_ok, let root = builder.pointee.root else {
                    throw JSONParseError(.syntax, "not valid JSON at byte \(position) (\(Self.message(from: handle)))")
                }
                return root
            }
        }
    }

    /// yajl's description of its error, without the excerpt of the input its verbose form adds,
    /// since the input may be a secret.
    private static func message(from handle: yajl_handle) -> String {
        guard let text = yajl_get_error(handle, 0, nil, 0) else { return "unknown error" }
        defer { yajl_free_error(handle, text) }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
