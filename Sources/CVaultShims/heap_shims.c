#include "heap_shims.h"

// Any libc header defines __GLIBC__ on glibc; it must come before the test.
#include <stdlib.h>

#if defined(__GLIBC__)
#include <malloc.h>

int wv_heap_trim(void) {
    return malloc_trim(0);
}
#else
int wv_heap_trim(void) {
    return 0;
}
#endif
