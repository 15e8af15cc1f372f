#include "crypto_shims.h"
#include <openssl/crypto.h>

void wv_openssl_free(void *pointer) { OPENSSL_free(pointer); }

void wv_openssl_clear_free(void *pointer, size_t length) { OPENSSL_clear_free(pointer, length); }
