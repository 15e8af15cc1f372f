#ifndef WV_PROCESS_SHIMS_H
#define WV_PROCESS_SHIMS_H

/// Caps how many malloc arenas glibc creates (mallopt M_ARENA_MAX, a macro Swift cannot see); no-op elsewhere.
void wv_limit_malloc_arenas(int arenas);

#endif
