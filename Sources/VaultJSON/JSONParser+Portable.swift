// Where yajl and simdjson are not linked (Apple platforms, whose apps may use only Apple's frameworks): the same
// JSONParser API over PortableJSONParser, which FuzzPortableJSON and the differential tests hold to yajl's answers.
#if !canImport(CYajl)
    import Foundation
    import VaultCore

    /// Parses untrusted JSON into a `JSONValue`, refusing duplicate member names: `PortableJSONParser` on this platform.
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
            try PortableJSONParser(maxDepth: maxDepth).parse(bytes)
        }

        /// Parses a complete JSON text, decoding the top-level object's string member `name` from base64url as it is read.
        ///
        /// - Throws: `JSONParseError` as `parse(_:)` does.
        public func parse(
            _ bytes: some ContiguousBytes, decodingBase64URLMember name: String
        ) throws(JSONParseError) -> (value: JSONValue, decoded: DecodedBase64URLMember?) {
            try PortableJSONParser(maxDepth: maxDepth).parse(bytes, decodingBase64URLMember: name)
        }
    }
#endif
