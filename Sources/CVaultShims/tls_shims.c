#include "tls_shims.h"
#include <limits.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

// Called by libcrypto when the key is encrypted: records that, and refuses, so nothing ever prompts on a terminal.
static int refuse_passphrase(char *buffer, int size, int rwflag, void *asked) {
    (void)buffer; (void)size; (void)rwflag;
    *(int *)asked = 1;
    return -1;
}

// Whether the last PEM read stopped because no further block was there (the normal end of a chain),
// rather than because a block was malformed.
static int at_end_of_pem(void) {
    unsigned long error = ERR_peek_last_error();
    return ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
}

wv_tls_check_result wv_tls_check_pem(const char *chain_pem, size_t chain_length,
                                     const char *key_pem, size_t key_length,
                                     int *certificates, int *bad_index) {
    *certificates = 0;
    *bad_index = -1;
    if (chain_length > INT_MAX || key_length > INT_MAX) return WV_TLS_FAILURE;
    wv_tls_check_result result = WV_TLS_OK;
    X509 *leaf = NULL;
    EVP_PKEY *key = NULL;
    int asked = 0;
    BIO *chain = BIO_new_mem_buf(chain_pem, (int)chain_length);
    BIO *key_bio = BIO_new_mem_buf(key_pem, (int)key_length);
    if (chain == NULL || key_bio == NULL) {
        result = WV_TLS_FAILURE;
        goto done;
    }
    ERR_clear_error();
    // Every certificate in the chain must parse: GnuTLS would refuse the whole file otherwise.
    for (;;) {
        X509 *certificate = PEM_read_bio_X509(chain, NULL, NULL, NULL);
        if (certificate == NULL) {
            if (!at_end_of_pem()) {
                *bad_index = *certificates;
                result = WV_TLS_BAD_CERTIFICATE;
                goto done;
            }
            break;
        }
        if (leaf == NULL) leaf = certificate; else X509_free(certificate);
        *certificates += 1;
    }
    if (leaf == NULL) {
        result = WV_TLS_NO_CERTIFICATE;
        goto done;
    }
    ERR_clear_error();
    key = PEM_read_bio_PrivateKey(key_bio, NULL, refuse_passphrase, &asked);
    if (key == NULL) {
        result = asked ? WV_TLS_ENCRYPTED_KEY : WV_TLS_NO_KEY;
        goto done;
    }
    if (X509_check_private_key(leaf, key) != 1) result = WV_TLS_KEY_MISMATCH;
done:
    ERR_clear_error();
    EVP_PKEY_free(key);
    X509_free(leaf);
    BIO_free(chain);
    BIO_free(key_bio);
    return result;
}
