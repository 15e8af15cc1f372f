// What mapping Argon2id's memory on huge pages (wv_argon2_allocate, handed to libargon2 as allocate_cbk) saves
// against libargon2's own malloc, at the default costs (m = 64 MiB, t = 3, p = 1): the figure behind
// docs/PERFORMANCE.md's note on Argon2id. Not part of the build or of make bench (which compares with argon2(1)).
//   cc -O2 -ISources/CVaultCryptoShims/include scripts/argon2_probe.c Sources/CVaultCryptoShims/argon2_shims.c -largon2 \
//     -o /tmp/argon2_probe && /tmp/argon2_probe
// The two alternate, RUNS times each; CPU time per hash (as argon2(1) reports it), medians, and the page faults
// of one hash each (getrusage).
#include <argon2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "argon2_shims.h"

enum { RUNS = 9 };

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static long minor_faults(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

// One hash; returns its CPU seconds and adds its page faults to *faults.
static double hash(int huge_pages, long *faults, uint8_t out[32]) {
    char password[] = "password", salt[] = "saltsaltsaltsalt";
    argon2_context context;
    memset(&context, 0, sizeof context);
    context.out = out;
    context.outlen = 32;
    context.pwd = (uint8_t *)password;
    context.pwdlen = 8;
    context.salt = (uint8_t *)salt;
    context.saltlen = 16;
    context.t_cost = 3;
    context.m_cost = 65536;
    context.lanes = context.threads = 1;
    context.version = ARGON2_VERSION_13;
    if (huge_pages) {
        context.allocate_cbk = wv_argon2_allocate;
        context.free_cbk = wv_argon2_free;
    }
    long before = minor_faults();
    double start = cpu_seconds();
    if (argon2_ctx(&context, Argon2_id) != ARGON2_OK) {
        fprintf(stderr, "argon2_ctx failed\n");
        exit(1);
    }
    double seconds = cpu_seconds() - start;
    *faults = minor_faults() - before;
    return seconds;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    double times[2][RUNS];
    long faults[2] = {0, 0};
    uint8_t outputs[2][32];
    for (int run = 0; run < RUNS; run++) {
        for (int huge = 0; huge < 2; huge++) times[huge][run] = hash(huge, &faults[huge], outputs[huge]);
    }
    if (memcmp(outputs[0], outputs[1], 32) != 0) {
        fprintf(stderr, "outputs differ\n");
        return 1;
    }
    for (int huge = 0; huge < 2; huge++) {
        qsort(times[huge], RUNS, sizeof(double), compare);
        printf("%-30s median %.3f s (min %.3f, max %.3f), %ld page faults per hash\n",
               huge ? "wv_argon2_allocate (huge)" : "libargon2 malloc", times[huge][RUNS / 2], times[huge][0],
               times[huge][RUNS - 1], faults[huge]);
    }
    return 0;
}
