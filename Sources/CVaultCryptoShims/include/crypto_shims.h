#ifndef WV_CRYPTO_SHIMS_H
#define WV_CRYPTO_SHIMS_H
#include <stddef.h>
#include <openssl/evp.h>

/// OPENSSL_free is a macro; Swift needs a function.
void wv_openssl_free(void *pointer);

/// OPENSSL_clear_free is a macro; used for buffers libcrypto allocated that hold private key material.
void wv_openssl_clear_free(void *pointer, size_t length);

#endif
