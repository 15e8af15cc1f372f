import Foundation
import VaultCore

/// Typed access to the members of one parsed JSON object, with errors that name the member's path.
struct MemberReader {
    private let object: JSONValue
    private let path: String

    /// Reads members of `object`, naming them `path.member` in errors.
    init(_ object: JSONValue, path: String) {
        self.object = object
        self.path = path
    }

    private func name(_ member: String) -> String { path.isEmpty ? member : "\(path).\(member)" }

    /// The member's value.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if it is missing.
    func member(_ member: String) throws(VaultEnvelopeError) -> JSONValue {
        guard let value = object[member] else { throw VaultEnvelopeError(.malformed, "\(name(member)) is missing") }
        return value
    }

    /// A string member.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if it is missing or not a string.
    func string(_ member: String) throws(VaultEnvelopeError) -> String {
        guard let text = try self.member(member).stringValue else {
            throw VaultEnvelopeError(.malformed, "\(name(member)) must be a string")
        }
        return text
    }

    /// A string member that may be absent.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if it is present but not a string.
    func optionalString(_ member: String) throws(VaultEnvelopeError) -> String? {
        guard object[member] != nil else { return nil }
        return try string(member)
    }

    /// A non-empty unpadded base64url member, decoded.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if it is missing, not a string, empty or not canonical base64url.
    func bytes(_ member: String) throws(VaultEnvelopeError) -> Data {
        guard let decoded = Base64URL.decode(try string(member)), !decoded.isEmpty else {
            throw VaultEnvelopeError(.malformed, "\(name(member)) must be non-empty unpadded base64url")
        }
        return decoded
    }

    /// A positive integer member below 2^53, the range every JSON implementation reads exactly.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` if it is missing, not an integer, or out of range.
    func positiveInteger(_ member: String) throws(VaultEnvelopeError) -> UInt64 {
        guard let value = try self.member(member).integerValue, value > 0, value < 1 << 53 else {
            throw VaultEnvelopeError(.malformed, "\(name(member)) must be an integer from 1 to 2^53 - 1")
        }
        return UInt64(value)
    }

    /// A positive integer member that fits an `Int`.
    ///
    /// - Throws: as `positiveInteger(_:)`.
    func int(_ member: String) throws(VaultEnvelopeError) -> Int {
        Int(try positiveInteger(member))
    }

    /// Refuses members outside `allowed`, so nothing unauthenticated-by-design or unknown rides along.
    ///
    /// - Throws: `VaultEnvelopeError` `.malformed` naming the first unexpected member.
    func refuseMembers(otherThan allowed: Set<String>) throws(VaultEnvelopeError) {
        if let unexpected = object.keys?.first(where: { !allowed.contains($0) }) {
            throw VaultEnvelopeError(.malformed, "\(name(unexpected)) is not a member this form allows")
        }
    }
}
