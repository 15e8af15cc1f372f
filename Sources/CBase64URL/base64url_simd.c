// Vector loops after Wojciech Muła and Daniel Lemire, "Faster Base64 Encoding and Decoding Using AVX2
// Instructions" (ACM TOW 2018), with the url-safe alphabet. Decoding classifies letters with the paper's nibble
// tables: about four times as fast as the range compares used before (scripts/decode_probe.c).
// Only the functions marked target("avx2") use AVX2, and only after the CPU has been asked.
#include "base64url_simd.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

static int has_avx2(void) {
    return __builtin_cpu_supports("avx2");
}

// Six bits per letter position → the letters, for the indices each 32-bit lane holds.
__attribute__((target("avx2")))
static __m256i letters_of(__m256i indices) {
    // Index ranges 0–25, 26–51, 52–61, 62, 63 each need one offset added; the saturating subtraction turns the
    // index into a small key (0 for 0–51, 1–12 above), 0–25 are then given key 13, and the key picks the offset.
    const __m256i offsets = _mm256_setr_epi8(
        'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '0' - 52, '-' - 62, '_' - 63, 'A', 0, 0,
        'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '0' - 52, '-' - 62, '_' - 63, 'A', 0, 0);
    __m256i key = _mm256_subs_epu8(indices, _mm256_set1_epi8(51));
    __m256i below26 = _mm256_cmpgt_epi8(_mm256_set1_epi8(26), indices);
    key = _mm256_or_si256(key, _mm256_and_si256(below26, _mm256_set1_epi8(13)));
    return _mm256_add_epi8(indices, _mm256_shuffle_epi8(offsets, key));
}

__attribute__((target("avx2")))
static size_t encode_avx2(const uint8_t *in, size_t length, uint8_t *out) {
    // Each 128-bit lane takes 12 input bytes (loaded as 16) and spreads every 3 bytes a, b, c over one 32-bit
    // lane as b, a, c, b, so that two multiplications can move the four 6-bit fields to the four bytes.
    const __m256i spread = _mm256_setr_epi8(
        1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,
        1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    size_t read = 0;
    // The second load reads 16 bytes from offset 12: 28 bytes must remain.
    while (length - read >= 28) {
        __m128i low = _mm_loadu_si128((const __m128i *)(in + read));
        __m128i high = _mm_loadu_si128((const __m128i *)(in + read + 12));
        __m256i bytes = _mm256_shuffle_epi8(_mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1), spread);
        __m256i first_third = _mm256_mulhi_epu16(
            _mm256_and_si256(bytes, _mm256_set1_epi32(0x0fc0fc00)), _mm256_set1_epi32(0x04000040));
        __m256i second_fourth = _mm256_mullo_epi16(
            _mm256_and_si256(bytes, _mm256_set1_epi32(0x003f03f0)), _mm256_set1_epi32(0x01000010));
        __m256i letters = letters_of(_mm256_or_si256(first_third, second_fourth));
        _mm256_storeu_si256((__m256i *)out, letters);
        read += 24;
        out += 32;
    }
    return read;
}

// The six-bit value of each letter, and in `invalid` a nonzero byte for each byte that is not a letter of the
// alphabet. The paper's nibble tables, redone for the url-safe alphabet: `invalid_by_low[l] & bit_of_high[h]` is
// nonzero exactly when the byte 0xhl is not a letter. Bits 0-7 of a low-nibble entry say for which high nibbles
// 0-7 that low nibble makes no letter; high nibbles 8-F (bytes from 0x80) have every bit, and every low-nibble
// entry has bits 0 and 1 (no letter has high nibble 0 or 1), so those bytes are always refused.
__attribute__((target("avx2")))
static __m256i sextets_of(__m256i letters, __m256i *invalid) {
    const __m256i invalid_by_low = _mm256_setr_epi8(
        0x57, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x0F, (char)0xAF, (char)0xAF, (char)0xAB, (char)0xAF, (char)0x8F,
        0x57, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x0F, (char)0xAF, (char)0xAF, (char)0xAB, (char)0xAF, (char)0x8F);
    const __m256i bit_of_high = _mm256_setr_epi8(
        0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, (char)0x80, -1, -1, -1, -1, -1, -1, -1, -1,
        0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, (char)0x80, -1, -1, -1, -1, -1, -1, -1, -1);
    // What to add to a letter to get its value, by high nibble: '-' (2), digits (3), A-Z (4, 5), a-z (6, 7);
    // '_' shares high nibble 5 with P-Z and is given index 13 instead.
    const __m256i offset_by_index = _mm256_setr_epi8(
        0, 0, 62 - '-', 52 - '0', -'A', -'A', 26 - 'a', 26 - 'a', 0, 0, 0, 0, 0, 63 - '_', 0, 0,
        0, 0, 62 - '-', 52 - '0', -'A', -'A', 26 - 'a', 26 - 'a', 0, 0, 0, 0, 0, 63 - '_', 0, 0);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    __m256i high = _mm256_and_si256(_mm256_srli_epi32(letters, 4), nibble);
    __m256i low = _mm256_and_si256(letters, nibble);
    *invalid = _mm256_and_si256(_mm256_shuffle_epi8(invalid_by_low, low), _mm256_shuffle_epi8(bit_of_high, high));
    __m256i underscore = _mm256_and_si256(_mm256_cmpeq_epi8(letters, _mm256_set1_epi8('_')), _mm256_set1_epi8(8));
    return _mm256_add_epi8(letters, _mm256_shuffle_epi8(offset_by_index, _mm256_or_si256(high, underscore)));
}

__attribute__((target("avx2")))
static size_t decode_avx2(const uint8_t *in, size_t length, uint8_t *out, size_t out_capacity, int *invalid) {
    // Per 128-bit lane: the 24-bit value of each group of four, its three bytes in order, then the two lanes'
    // twelve bytes made contiguous.
    const __m256i gather = _mm256_setr_epi8(
        2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,
        2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
    __m256i any_invalid = _mm256_setzero_si256();
    size_t read = 0, written = 0;
    while (length - read >= 32 && out_capacity - written >= 32) {
        __m256i invalid_here;
        __m256i sextets = sextets_of(_mm256_loadu_si256((const __m256i *)(in + read)), &invalid_here);
        any_invalid = _mm256_or_si256(any_invalid, invalid_here);
        __m256i pairs = _mm256_maddubs_epi16(sextets, _mm256_set1_epi32(0x01400140));
        __m256i groups = _mm256_madd_epi16(pairs, _mm256_set1_epi32(0x00011000));
        __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(groups, gather), join);
        _mm256_storeu_si256((__m256i *)(out + written), bytes);
        read += 32;
        written += 24;
    }
    *invalid = !_mm256_testz_si256(any_invalid, any_invalid);
    return read;
}

__attribute__((target("avx2")))
static size_t check_avx2(const uint8_t *in, size_t length, int *invalid) {
    __m256i any_invalid = _mm256_setzero_si256();
    size_t read = 0;
    while (length - read >= 32) {
        __m256i invalid_here;
        (void)sextets_of(_mm256_loadu_si256((const __m256i *)(in + read)), &invalid_here);
        any_invalid = _mm256_or_si256(any_invalid, invalid_here);
        read += 32;
    }
    *invalid = !_mm256_testz_si256(any_invalid, any_invalid);
    return read;
}

size_t wv_base64url_encode_bulk(const uint8_t *in, size_t length, uint8_t *out) {
    return has_avx2() ? encode_avx2(in, length, out) : 0;
}

size_t wv_base64url_decode_bulk(const uint8_t *in, size_t length, uint8_t *out, size_t out_capacity, int *invalid) {
    *invalid = 0;
    return has_avx2() ? decode_avx2(in, length, out, out_capacity, invalid) : 0;
}

size_t wv_base64url_check_bulk(const uint8_t *in, size_t length, int *invalid) {
    *invalid = 0;
    return has_avx2() ? check_avx2(in, length, invalid) : 0;
}

#else

size_t wv_base64url_encode_bulk(const uint8_t *in, size_t length, uint8_t *out) {
    (void)in; (void)length; (void)out;
    return 0;
}

size_t wv_base64url_decode_bulk(const uint8_t *in, size_t length, uint8_t *out, size_t out_capacity, int *invalid) {
    (void)in; (void)length; (void)out; (void)out_capacity;
    *invalid = 0;
    return 0;
}

size_t wv_base64url_check_bulk(const uint8_t *in, size_t length, int *invalid) {
    (void)in; (void)length;
    *invalid = 0;
    return 0;
}

#endif
