#ifndef WV_HEAP_SHIMS_H
#define WV_HEAP_SHIMS_H

/// glibc's malloc_trim(0), which Swift's Glibc module does not export (it lives in <malloc.h>); elsewhere a no-op.
/// Returns 1 when memory was given back to the system.
int wv_heap_trim(void);

#endif
