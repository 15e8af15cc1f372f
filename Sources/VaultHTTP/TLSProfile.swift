/// Which of Mozilla's server-side TLS configurations (https://wiki.mozilla.org/Security/Server_Side_TLS, version 5.7)
/// the built-in HTTPS follows: the `tls.profile` configuration key.
public enum TLSProfile: String, Sendable, CaseIterable {
    /// TLS 1.2 and 1.3; ECDHE with AES-GCM or ChaCha20-Poly1305. The oldest clients Mozilla lists for it: Android 4.4.2,
    /// Firefox 27, Chrome 31, Safari 9, Java 8u31, OpenSSL 1.0.1. The default.
    case intermediate
    /// TLS 1.3 only (AES-GCM and ChaCha20-Poly1305 suites): Android 10, Firefox 63, Chrome 70, Safari 12.1 and later.
    case modern

    /// The GnuTLS priority string libmicrohttpd is given (`MHD_OPTION_HTTPS_PRIORITIES`).
    ///
    /// Built from `NORMAL` by removing the versions, key exchanges, ciphers, MACs and groups and adding back only
    /// what the profile allows, so a newer GnuTLS cannot widen any of those with something `NORMAL` gains later.
    /// TLS 1.3 suites follow from the ciphers and `AEAD` (CCM is left out). Groups: X25519, P-256, P-384, as Mozilla
    /// lists them; no finite-field groups and no `DHE` key exchange. SHA-1 handshake signatures are removed
    /// (RFC 9155). Check one with `gnutls-cli --priority '<string>' --list`.
    public var gnutlsPriorities: String {
        let versions: String
        switch self {
        case .intermediate: versions = "-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
        case .modern: versions = "-VERS-ALL:+VERS-TLS1.3"
        }
        return [
            "NORMAL", versions,
            "-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA",
            "-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305",
            "-MAC-ALL:+AEAD",
            "-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1",
            "-SIGN-RSA-SHA1:-SIGN-ECDSA-SHA1",
        ].joined(separator: ":")
    }
}
