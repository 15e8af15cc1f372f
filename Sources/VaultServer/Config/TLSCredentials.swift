import CVaultShims
import Foundation

/// The certificate chain and private key for HTTPS, read and checked before libmicrohttpd is given them.
///
/// libmicrohttpd only reports that it could not start, which reads like a busy port; checking the pair here
/// first lets a wrong file stop startup with the configuration key it came from (exit status 2).
public struct TLSCredentials: Sendable {
    /// The PEM certificate chain, leaf first.
    public let certificateChain: String
    /// The PEM private key of the leaf certificate.
    public let privateKey: String

    /// Reads `tls.certificate_file` and `tls.key_file` and checks that every certificate parses and the key is the
    /// first certificate's.
    ///
    /// - Throws: `ServerStartupError` naming the key whose file is unreadable, unparsable, encrypted or mismatched.
    ///   The reason names files, never their contents.
    public static func load(_ files: ServerConfiguration.TLSFiles) throws(ServerStartupError) -> TLSCredentials {
        let chain = try pemText(files.certificateFile, key: "tls.certificate_file")
        let key = try pemText(files.keyFile, key: "tls.key_file")
        var certificates: Int32 = 0
        var badIndex: Int32 = -1
        let result = chain.utf8CString.withUnsafeBufferPointer { chainBytes in
            key.utf8CString.withUnsafeBufferPointer { keyBytes in
                // The counts leave out the terminating NUL that utf8CString adds.
                wv_tls_check_pem(
                    chainBytes.baseAddress, chainBytes.count - 1, keyBytes.baseAddress, keyBytes.count - 1,
                    &certificates, &badIndex)
            }
        }
        switch result {
        case WV_TLS_OK:
            return TLSCredentials(certificateChain: chain, privateKey: key)
        case WV_TLS_NO_CERTIFICATE:
            throw ServerStartupError("config key tls.certificate_file: no PEM certificate in \(files.certificateFile)")
        case WV_TLS_BAD_CERTIFICATE:
            throw ServerStartupError(
                "config key tls.certificate_file: certificate \(badIndex + 1) in \(files.certificateFile) is not a valid X.509 certificate")
        case WV_TLS_ENCRYPTED_KEY:
            throw ServerStartupError(
                "config key tls.key_file: \(files.keyFile) is encrypted; give the key unencrypted (openssl pkey -in KEY -out PLAIN), readable by the service only"
            )
        case WV_TLS_NO_KEY:
            throw ServerStartupError("config key tls.key_file: no valid PEM private key in \(files.keyFile)")
        case WV_TLS_KEY_MISMATCH:
            throw ServerStartupError(
                "config key tls.key_file: \(files.keyFile) is not the private key of the first certificate in \(files.certificateFile) "
                    + "(tls.certificate_file must start with the server's own certificate, then its intermediates)")
        default:
            throw ServerStartupError("config key tls: libcrypto could not check the certificate and key")
        }
    }

    /// A file's text, refused when it cannot be PEM: unreadable, not UTF-8 (a DER file), or holding a NUL byte,
    /// which would cut the text libmicrohttpd reads short.
    private static func pemText(_ path: String, key: String) throws(ServerStartupError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServerStartupError("config key \(key): cannot read \(path)")
        }
        guard !data.contains(0), let text = String(data: data, encoding: .utf8) else {
            throw ServerStartupError("config key \(key): \(path) is not PEM text")
        }
        return text
    }
}
