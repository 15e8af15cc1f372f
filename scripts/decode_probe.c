// How fast the AVX2 base64url decoder is on a 1 MiB vault's cipher, and whether decoding and decrypting in chunks,
// in place, would beat decoding the whole string and then decrypting it: the figures behind docs/PERFORMANCE.md's
// notes on the open path. Not part of the build or of make bench.
//   cc -O2 -ISources/CBase64URL/include scripts/decode_probe.c Sources/CBase64URL/base64url_simd.c -lcrypto \
//     -o /tmp/decode_probe && /tmp/decode_probe
// Times are wall clock, median of 15 runs of 200 repetitions each.
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base64url_simd.h"

enum { PLAIN = 1 << 20, LETTERS = 1398104, REPS = 200, RUNS = 15 };
static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static uint8_t letters[LETTERS], decoded[PLAIN + 64], plain[PLAIN + 64];
static EVP_CIPHER_CTX *context;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void decode_whole(void) {
    int invalid;
    wv_base64url_decode_bulk(letters, LETTERS, decoded, sizeof decoded, &invalid);
}

static void decode_then_decrypt(void) {
    static const uint8_t key[32], iv[12];
    int length;
    decode_whole();
    EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), NULL, key, iv);
    EVP_DecryptUpdate(context, plain, &length, decoded, PLAIN);
}

static void chunked_in_place(void) {
    static const uint8_t key[32], iv[12];
    // 4096 letters are 3072 bytes, a whole number of AES blocks.
    enum { CHUNK = 4096 };
    int length, invalid;
    EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), NULL, key, iv);
    size_t read = 0, written = 0;
    while (read + CHUNK <= LETTERS) {
        size_t used = wv_base64url_decode_bulk(letters + read, CHUNK, plain + written, sizeof plain - written, &invalid);
        EVP_DecryptUpdate(context, plain + written, &length, plain + written, (int)(used / 4 * 3));
        read += used;
        written += used / 4 * 3;
    }
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_ms(void (*body)(void)) {
    double runs[RUNS];
    for (int run = 0; run < RUNS; run++) {
        double start = now();
        for (int rep = 0; rep < REPS; rep++) body();
        runs[run] = (now() - start) / REPS * 1e3;
    }
    qsort(runs, RUNS, sizeof runs[0], compare);
    return runs[RUNS / 2];
}

int main(void) {
    srand(1);
    for (int i = 0; i < LETTERS; i++) letters[i] = (uint8_t)alphabet[rand() % 64];
    context = EVP_CIPHER_CTX_new();
    printf("decode 1.4 MB of base64url: %.3f ms\n", median_ms(decode_whole));
    printf("decode, then AES-GCM decrypt 1 MiB: %.3f ms\n", median_ms(decode_then_decrypt));
    printf("decode and decrypt in 3 KiB chunks, in place: %.3f ms\n", median_ms(chunked_in_place));
    EVP_CIPHER_CTX_free(context);
    return 0;
}
