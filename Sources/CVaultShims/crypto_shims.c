#include "crypto_shims.h"
#include <openssl/crypto.h>

void wv_openssl_free(void *pointer) { OPENSSL_free(pointer); }
