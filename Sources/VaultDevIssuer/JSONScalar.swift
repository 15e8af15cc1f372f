/// A claim value as minted by the development issuer: a string or an integer.
enum JSONScalar: Encodable {
    case string(String)
    case integer(Int64)

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        }
    }
}
