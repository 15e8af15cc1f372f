import Foundation
import VaultCrypto
import VaultStorage

/// Turns a user's (OIDC issuer, azp, subject) into the storage key, under a server-side pepper.
///
/// Each field is length-prefixed, so no choice of strings makes two different triples frame to
/// the same bytes: two OEMs, or two issuers, never reach each other's blob.
public struct StorageKeyDeriver: Sendable {
    private let pepper: SymmetricKey
    private static let label = Data("walletvault/storage-key/v1".utf8)

    /// Creates a deriver with a pepper of at least 32 bytes.
    ///
    /// - Throws: `ServerStartupError` when the pepper is shorter.
    public init(pepper: Data) throws(ServerStartupError) {
        guard pepper.count >= 32 else { throw ServerStartupError("storage key pepper must be at least 32 bytes") }
        self.pepper = SymmetricKey(data: pepper)
    }

    /// The storage key of one user.
    public func key(issuer: String, authorizedParty: String, subject: String) -> StorageKey {
        var framed = Self.label
        for field in [issuer, authorizedParty, subject] {
            let bytes = Data(field.utf8)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { framed.append(contentsOf: $0) }
            framed.append(bytes)
        }
        return StorageKey(bytes: HMAC<SHA256>.authenticationCode(for: framed, using: pepper))
    }
}
