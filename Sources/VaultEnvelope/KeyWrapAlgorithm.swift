/// How an entry of `wrappedDeks` wraps the DEK, named as JWA (RFC 7518 §4.1) names it.
///
/// The seed's iOS scheme has no JWA name; it gets a private, collision-resistant one (RFC 7515 §4.1.1
/// recommends a prefix for unregistered names).
public enum KeyWrapAlgorithm: String, Sendable, CaseIterable {
    /// AES-256 key wrap (RFC 3394) with a stored, recovery-code or passphrase-derived key.
    case a256kw = "A256KW"
    /// AES-256-GCM key wrap (RFC 7518 §4.7), the Android Keystore scheme; IV and tag in their own members.
    case a256gcmkw = "A256GCMKW"
    /// RSAES-OAEP with SHA-256 and MGF1-SHA256.
    case rsaOAEP256 = "RSA-OAEP-256"
    /// Ephemeral-static ECDH on P-256, the JOSE Concat KDF, then A256KW (RFC 7518 §4.6).
    case ecdhESA256KW = "ECDH-ES+A256KW"
    /// The seed's iOS scheme: static ECDH of a P-256 key with itself, HKDF-SHA256 (empty salt,
    /// info `vault-kek-v1`), then AES-256-GCM over the DEK, stored as IV ‖ ciphertext ‖ tag.
    case selfECDH = "WV-ECDH-SELF+A256GCMKW"
}

extension KeyWrapAlgorithm {
    /// Whether an entry of this algorithm proves its writer held the key (FORMAT.md §11.2).
    ///
    /// Symmetric entries can only be made by a holder of the key; public-key entries by anyone who knows the
    /// recipient's public key, the server included.
    public var authenticatesWriter: Bool {
        switch self {
        case .a256kw, .a256gcmkw, .selfECDH: true
        case .rsaOAEP256, .ecdhESA256KW: false
        }
    }
}
