extension P256 {
    /// Elliptic-curve Diffie-Hellman on P-256 (JOSE ECDH-ES).
    public enum KeyAgreement {}
}
