// Where CryptoKit exists, its types are VaultCrypto's: AES.GCM, AES.KeyWrap, P256, SHA256, HMAC, HKDF, SymmetricKey,
// SharedSecret. Elsewhere the OpenSSL backend defines the same names with the same signatures (swift-crypto's
// arrangement), so VaultEnvelope and WalletVault compile unchanged against either.
#if canImport(CryptoKit)
    @_exported import CryptoKit
#endif
