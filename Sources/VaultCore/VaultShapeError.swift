/// A blob that is valid JSON but not a vault of the seed's shape.
///
/// `detail` names the offending field (for example `wrappedDeks[2].dek_cipher`) and says what
/// was expected; it never quotes the field's value, which may be key material.
public struct VaultShapeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The field path and what was wrong with it.
    public let detail: String

    /// Creates a shape error with a detail naming the field.
    public init(_ detail: String) {
        self.detail = detail
    }

    public var description: String { "invalid vault shape: \(detail)" }
}
