import Foundation
import VaultCore
import VaultCrypto

/// Derives `kek_id`s for symmetric keys: a key check value that identifies the key and reveals nothing about it.
enum KeyIdentifier {
    private static let label = Data("WalletVault-v1 kek_id".utf8)

    /// `base64url(HMAC-SHA256(key, "WalletVault-v1 kek_id")[0..<16])`, 22 characters.
    ///
    /// An HMAC output under the key itself gives an attacker only what a wrapped DEK already gives: a way to
    /// test a guess of the whole key.
    static func symmetric(_ key: SymmetricKey) -> String {
        Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: label, using: key)).prefix(16))
    }
}
