import CLibCrypto
import Foundation

extension RSA {
    /// RSAES-OAEP with SHA-256 and MGF1-SHA256 (JOSE RSA-OAEP-256).
    public enum Encryption {
        /// Selects OAEP-SHA256 with MGF1-SHA256 and `label` on an encryption or decryption `EVP_PKEY_CTX`.
        static func configureOAEP(_ context: OpaquePointer, label: some DataProtocol) throws {
            try LibCrypto.check(EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING), .libraryFailure, "cannot select OAEP")
            try LibCrypto.check(EVP_PKEY_CTX_set_rsa_oaep_md(context, EVP_sha256()), .libraryFailure, "cannot select SHA-256")
            try LibCrypto.check(EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha256()), .libraryFailure, "cannot select MGF1-SHA256")
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
}
