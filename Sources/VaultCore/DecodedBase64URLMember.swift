import Foundation

/// A base64url string member that the JSON parser decoded as it read it, instead of keeping its text in the tree.
///
/// A vault's `cipher` runs to megabytes; holding it as a `String` and then decoding it would cost an open more than
/// its AES-GCM does.
public enum DecodedBase64URLMember: Sendable, Equatable {
    /// The member's bytes.
    case decoded(Data)
    /// The member was a string, but not unpadded base64url.
    case notBase64URL
}
