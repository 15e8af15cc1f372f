import CJansson
import Foundation
import VaultCore

/// Parses untrusted JSON into a `JSONValue` with jansson, refusing duplicate member names.
///
/// jansson validates UTF-8, refuses lone surrogates and reports duplicate keys as their own
/// error code, which Foundation's parser silently collapses.
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
        // jansson stops at a raw NUL byte and would accept "123\0garbage"; JSON never allows one.
        if let offset = bytes.withUnsafeBytes({ $0.firstIndex(of: 0) }) {
            throw JSONParseError(.syntax, "raw NUL byte at byte \(offset)")
        }
        var error = json_error_t()
        let flags = JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL
        let root = bytes.withUnsafeBytes { buffer in
            json_loadb(buffer.baseAddress?.assumingMemoryBound(to: CChar.self), buffer.count, size_t(flags), &error)
        }
        guard let root else {
            let reason = "line \(error.line), column \(error.column), byte \(error.position)"
            switch json_error_code(&error) {
            case json_error_duplicate_key: throw JSONParseError(.duplicateKey, "duplicate member name at \(reason)")
            case json_error_stack_overflow: throw JSONParseError(.tooDeep, "nesting too deep at \(reason)")
            default: throw JSONParseError(.syntax, "not valid JSON at \(reason)")
            }
        }
        defer { json_decref(root) }
        return try convert(root, depth: 1)
    }

    private func convert(_ node: UnsafeMutablePointer<json_t>, depth: Int) throws(JSONParseError) -> JSONValue {
        switch node.pointee.type {
        case JSON_OBJECT:
            guard depth <= maxDepth else { throw JSONParseError(.tooDeep, "nesting deeper than \(maxDepth)") }
            var members: [(key: String, value: JSONValue)] = []
            var iterator = json_object_iter(node)
            while let current = iterator {
                let keyPointer = json_object_iter_key(current)!
                let keyLength = json_object_iter_key_len(current)
                let key = String(decoding: UnsafeRawBufferPointer(start: keyPointer, count: keyLength), as: UTF8.self)
                members.append((key, try convert(json_object_iter_value(current), depth: depth + 1)))
                iterator = json_object_iter_next(node, current)
            }
            return .object(members)
        case JSON_ARRAY:
            guard depth <= maxDepth else { throw JSONParseError(.tooDeep, "nesting deeper than \(maxDepth)") }
            var elements: [JSONValue] = []
            elements.reserveCapacity(json_array_size(node))
            for index in 0..<json_array_size(node) {
                elements.append(try convert(json_array_get(node, index), depth: depth + 1))
            }
            return .array(elements)
        case JSON_STRING:
            let pointer = json_string_value(node)!
            let length = json_string_length(node)
            return .string(String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self))
        case JSON_INTEGER:
            return .integer(json_integer_value(node))
        case JSON_REAL:
            return .number(json_real_value(node))
        case JSON_TRUE:
            return .bool(true)
        case JSON_FALSE:
            return .bool(false)
        default:
            return .null
        }
    }
}
