// Umbrella header: the server's plain C helpers for C APIs that do not import cleanly into Swift (libmicrohttpd and the
// header gate in front of its parser, glibc's malloc_trim, the TLS pair check). The SDK's are in CVaultCryptoShims, so no SDK target links these.
#include "mhd_shims.h"
#include "header_gate.h"
#include "heap_shims.h"
#include "tls_shims.h"
