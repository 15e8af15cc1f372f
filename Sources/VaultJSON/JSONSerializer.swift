// Linux: jansson. Elsewhere (Apple platforms) JSONSerializer+Portable.swift writes with PortableJSONSerializer.
#if canImport(CJansson)
    import CJansson
    import Foundation
    import VaultCore

    /// Writes a `JSONValue` as compact JSON with jansson, members in the order given.
    ///
    /// Order matters to callers: RFC 7638 thumbprints and the blob layout FORMAT.md documents.
    public enum JSONSerializer {
        /// The compact UTF-8 JSON text of `value`. Non-finite numbers, which JSON cannot hold, are written as `null`.
        public static func data(of value: JSONValue) -> Data {
            let node = makeNode(value)
            defer { json_decref(node) }
            let flags = size_t(JSON_COMPACT | JSON_ENCODE_ANY)
            let size = json_dumpb(node, nil, 0, flags)
            var output = Data(count: size)
            let written = output.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
                json_dumpb(node, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), size, flags)
            }
            precondition(written == size, "jansson wrote a different length the second time")
            return output
        }

        private static func makeNode(_ value: JSONValue) -> UnsafeMutablePointer<json_t> {
            switch value {
            case .null: return json_null()
            case .bool(let flag): return flag ? json_true() : json_false()
            case .integer(let number): return json_integer(json_int_t(number))
            case .number(let number): return json_real(number) ?? json_null()
            case .string(let text):
                var text = text
                // Swift strings are valid UTF-8 already; the _nocheck variants skip jansson's re-validation.
                return text.withUTF8 { bytes in
                    json_stringn_nocheck(
                        UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                            .assumingMemoryBound(to: CChar.self), bytes.count)
                }
            case .array(let elements):
                let array = json_array()!
                for element in elements { json_array_append_new(array, makeNode(element)) }
                return array
            case .object(let members):
                let object = json_object()!
                for (key, member) in members {
                    var key = key
                    key.withUTF8 { bytes in
                        _ = json_object_setn_new_nocheck(
                            object,
                            UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!).assumingMemoryBound(to: CChar.self),
                            bytes.count, makeNode(member))
                    }
                }
                return object
            }
        }
    }
#endif
