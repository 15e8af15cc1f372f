// Umbrella header: VaultCrypto's plain C helpers on Linux (OpenSSL macros, the Argon2 allocator).
#include "crypto_shims.h"
#include "argon2_shims.h"
