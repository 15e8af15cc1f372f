// Where jansson is not linked (Apple platforms): the same JSONSerializer API over PortableJSONSerializer, which the
// tests and FuzzPortableJSON hold to jansson's bytes.
#if !canImport(CJansson)
    import Foundation
    import VaultCore

    /// Writes a `JSONValue` as compact JSON, members in the order given: `PortableJSONSerializer` on this platform.
    public enum JSONSerializer {
        /// The compact UTF-8 JSON text of `value`. Non-finite numbers, which JSON cannot hold, are written as `null`.
        public static func data(of value: JSONValue) -> Data {
            PortableJSONSerializer.data(of: value)
        }
    }
#endif
