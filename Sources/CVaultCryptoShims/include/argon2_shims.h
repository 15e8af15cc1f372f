#ifndef WV_ARGON2_SHIMS_H
#define WV_ARGON2_SHIMS_H
#include <stddef.h>
#include <stdint.h>

/// libargon2's allocate_cbk: maps the Argon2 memory on its own, aligned to 2 MiB and marked for transparent huge
/// pages and for leaving out of core dumps. Argon2 reads its memory at random, so with 4 KiB pages most of its
/// time went to TLB misses and page faults. Returns 0, or ARGON2_MEMORY_ALLOCATION_ERROR with *memory NULL.
int wv_argon2_allocate(uint8_t **memory, size_t bytes);

/// libargon2's free_cbk for memory from wv_argon2_allocate (libargon2 has wiped it already).
void wv_argon2_free(uint8_t *memory, size_t bytes);

#endif
