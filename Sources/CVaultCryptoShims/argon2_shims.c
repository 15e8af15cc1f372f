#include "argon2_shims.h"

#include <argon2.h>
#include <sys/mman.h>
#include <unistd.h>

static const size_t huge_page = (size_t)2 << 20;

static size_t page_rounded(size_t bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + page - 1) / page * page;
}

int wv_argon2_allocate(uint8_t **memory, size_t bytes) {
    *memory = NULL;
    size_t length = page_rounded(bytes);
    if (length == 0 || length > SIZE_MAX - huge_page) return ARGON2_MEMORY_ALLOCATION_ERROR;
    // Map a huge page more than needed, then give back what lies before the first 2 MiB boundary and after the end.
    uint8_t *mapped = mmap(NULL, length + huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) return ARGON2_MEMORY_ALLOCATION_ERROR;
    uint8_t *aligned = (uint8_t *)(((uintptr_t)mapped + huge_page - 1) & ~(uintptr_t)(huge_page - 1));
    size_t head = (size_t)(aligned - mapped);
    size_t tail = huge_page - head;
    if (head > 0) munmap(mapped, head);
    if (tail > 0) munmap(aligned + length, tail);
    // Both are advice: without transparent huge pages the memory works the same, only slower.
    (void)madvise(aligned, length, MADV_HUGEPAGE);
    (void)madvise(aligned, length, MADV_DONTDUMP);
    *memory = aligned;
    return ARGON2_OK;
}

void wv_argon2_free(uint8_t *memory, size_t bytes) {
    if (memory != NULL) munmap(memory, page_rounded(bytes));
}
