// Umbrella header: plain C helpers for C APIs that do not import cleanly into Swift.
#include "mhd_shims.h"
#include "crypto_shims.h"
#include "heap_shims.h"
#include "argon2_shims.h"
#include "tls_shims.h"
