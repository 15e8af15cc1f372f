extension P256 {
    /// ECDSA over P-256 with SHA-256 (JOSE ES256).
    public enum Signing {}
}
