#include "process_shims.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void wv_limit_malloc_arenas(int arenas) {
#if defined(__GLIBC__)
    mallopt(M_ARENA_MAX, arenas);
#else
    (void)arenas;
#endif
}
