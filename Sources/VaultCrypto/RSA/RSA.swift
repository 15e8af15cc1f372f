/// RSA with SHA-256: RSASSA-PKCS1-v1_5 and RSASSA-PSS signatures, RSAES-OAEP encryption; 2048-bit keys and up.
public enum RSA {
    /// RSAES-OAEP with SHA-256 and MGF1-SHA256 (JOSE RSA-OAEP-256): libcrypto on Linux, Security on Apple platforms.
    public enum Encryption {}
}
