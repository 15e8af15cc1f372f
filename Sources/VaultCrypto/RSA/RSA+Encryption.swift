// OpenSSL backend: where CryptoKit exists, VaultCrypto re-exports it instead (CryptoKitBackend.swift).
#if !canImport(CryptoKit)
    import CLibCrypto
    import Foundation

    extension RSA.Encryption {
        /// Selects OAEP-SHA256 with MGF1 over `mgf1` (SHA-256 unless asked) and `label` on an encryption or decryption
        /// `EVP_PKEY_CTX`.
        static func configureOAEP(_ context: OpaquePointer, label: some DataProtocol, mgf1: MaskGenerationHash = .sha256) throws {
            try LibCrypto.check(EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING), .libraryFailure, "cannot select OAEP")
            try LibCrypto.check(EVP_PKEY_CTX_set_rsa_oaep_md(context, EVP_sha256()), .libraryFailure, "cannot select SHA-256")
            let maskHash =
                switch mgf1 {
                case .sha256: EVP_sha256()
                case .sha1: EVP_sha1()
                }
            try LibCrypto.check(EVP_PKEY_CTX_set_rsa_mgf1_md(context, maskHash), .libraryFailure, "cannot select the MGF1 hash")
            guard !label.isEmpty else { return }
            // Set as a parameter rather than with EVP_PKEY_CTX_set0_rsa_oaep_label, which would take ownership of the buffer.
            try LibCrypto.withContiguousBytes(label) { bytes in
                let parameters = [
                    OSSL_PARAM_construct_octet_string(
                        OpenSSLName.oaepLabel.cString, UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count
                    ),
                    OSSL_PARAM_construct_end(),
                ]
                try LibCrypto.check(EVP_PKEY_CTX_set_params(context, parameters), .libraryFailure, "cannot set the OAEP label")
            }
        }
    }

    extension RSAPublicKeyImpl {
        /// OAEP-SHA256 encryption, for `RSA.Encryption.PublicKey`.
        func encrypt(_ message: some DataProtocol, label: some DataProtocol, mgf1: RSA.Encryption.MaskGenerationHash) throws -> Data {
            try PKeyContext(key: key).encrypt(message) { try RSA.Encryption.configureOAEP($0, label: label, mgf1: mgf1) }
        }
    }

    extension RSAPrivateKeyImpl {
        /// OAEP-SHA256 decryption, for `RSA.Encryption.PrivateKey`.
        func decrypt(_ ciphertext: some DataProtocol, label: some DataProtocol, mgf1: RSA.Encryption.MaskGenerationHash) throws -> Data {
            try PKeyContext(key: key).decrypt(ciphertext) { try RSA.Encryption.configureOAEP($0, label: label, mgf1: mgf1) }
        }
    }
#endif
