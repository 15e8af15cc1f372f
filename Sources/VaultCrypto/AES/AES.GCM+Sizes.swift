extension AES.GCM.Nonce {
    /// The nonce length AES-GCM is used with here, in bytes (CryptoKit names no constant for it).
    public static let byteCount = 12
}

extension AES.GCM.SealedBox {
    /// The authentication tag length in bytes (CryptoKit names no constant for it).
    public static let tagByteCount = 16
}
