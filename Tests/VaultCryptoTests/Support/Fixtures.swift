import Foundation

/// Loads JSON test vectors copied into `Fixtures/` (see `Fixtures/SOURCES.md`).
enum Fixtures {
    static func load<T: Decodable>(_ relativePath: String, as type: T.Type = T.self) throws -> T {
        let url = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/\(relativePath)")
        return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
    }
}

/// The Wycheproof verdict for one vector.
enum WycheproofResult: String, Decodable {
    case valid, invalid, acceptable
}

/// The envelope shared by every Wycheproof file; `numberOfTests` lets suites prove they skipped nothing.
struct WycheproofFile<Group: Decodable>: Decodable {
    let algorithm: String
    let numberOfTests: Int
    let testGroups: [Group]
}

/// A hex string from a vector file, decoded on access.
struct HexBytes: Decodable {
    let data: Data

    init(from decoder: Decoder) throws {
        data = Data(hex: try decoder.singleValueContainer().decode(String.self))
    }
}
