/// RSA with SHA-256: RSASSA-PKCS1-v1_5 and RSASSA-PSS signatures, RSAES-OAEP encryption; 2048-bit keys and up.
public enum RSA {
    /// RSAES-OAEP with SHA-256 and MGF1-SHA256 (JOSE RSA-OAEP-256): libcrypto on Linux, Security on Apple platforms.
    public enum Encryption {
        /// The hash of OAEP's mask generation function MGF1 (RFC 8017 §B.2.1); the OAEP hash is SHA-256 either way.
        ///
        /// JOSE's RSA-OAEP-256 is MGF1-SHA256. MGF1-SHA1 is only for reading what Java's
        /// `RSA/ECB/OAEPWithSHA-256AndMGF1Padding` produces without an explicit `OAEPParameterSpec`, as the seed's
        /// Android code may have.
        public enum MaskGenerationHash: Sendable, Hashable {
            /// MGF1 with SHA-256, the default everywhere in this package.
            case sha256
            /// MGF1 with SHA-1, Java's default mask hash for OAEP.
            case sha1
        }
    }
}
