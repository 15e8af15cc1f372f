import Foundation
import VaultCore
import VaultCrypto

/// What nodes of one service share besides the database: who can open a session and how keys are derived.
public struct TestServerSecrets: Sendable {
    /// The session-token keys file's contents.
    public let sessionKeys: Data
    /// The storage-key pepper.
    public let pepper: Data

    /// New random keys and pepper.
    public static func random() -> TestServerSecrets {
        TestServerSecrets(
            sessionKeys: Data(#"[{"kid":"s1","secret":"\#(Base64URL.encode(SecureRandom.bytes(count: 32)))"}]"#.utf8),
            pepper: SecureRandom.bytes(count: 32))
    }
}
