#ifndef WV_TLS_SHIMS_H
#define WV_TLS_SHIMS_H
#include <stddef.h>

/// What `wv_tls_check_pem` found wrong with a certificate chain and private key, or `WV_TLS_OK`.
typedef enum wv_tls_check_result {
    WV_TLS_OK = 0,
    WV_TLS_NO_CERTIFICATE = 1,   // no PEM CERTIFICATE block in the chain text
    WV_TLS_BAD_CERTIFICATE = 2,  // a CERTIFICATE block that is not a valid X.509 certificate
    WV_TLS_NO_KEY = 3,           // no PEM private key, or one that does not parse
    WV_TLS_ENCRYPTED_KEY = 4,    // the key is protected by a passphrase
    WV_TLS_KEY_MISMATCH = 5,     // the key is not the first certificate's private key
    WV_TLS_FAILURE = 6,          // libcrypto could not allocate
} wv_tls_check_result;

/// Parses a PEM certificate chain (leaf first) and a PEM private key with libcrypto and checks that the key is
/// the leaf certificate's, so a wrong pair is refused with a reason instead of libmicrohttpd's failed start.
/// `certificates` is set to the number of certificates read, `bad_index` to the 0-based index of a certificate
/// that did not parse. Never asks for a passphrase. Clears libcrypto's error queue. (In C because the passphrase
/// callback is a C function pointer, and VaultServer itself does not link libcrypto.)
wv_tls_check_result wv_tls_check_pem(const char *chain_pem, size_t chain_length,
                                     const char *key_pem, size_t key_length,
                                     int *certificates, int *bad_index);

#endif
