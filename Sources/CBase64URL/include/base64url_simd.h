#ifndef WV_BASE64URL_SIMD_H
#define WV_BASE64URL_SIMD_H

#include <stddef.h>
#include <stdint.h>

/// Bulk base64url (RFC 4648 §5) loops with AVX2, chosen at run time; each returns 0 on a CPU without AVX2 and
/// leaves the rest, always including the last partial group, to the caller's scalar code.

/// Encodes the longest prefix of `in` the vector loop handles (a multiple of 24 bytes) into `out`, which must
/// hold 4/3 as many bytes; returns the number of input bytes consumed.
size_t wv_base64url_encode_bulk(const uint8_t *in, size_t length, uint8_t *out);

/// Decodes whole groups of 32 letters into `out` while 32 bytes of room remain there (`out_capacity`); returns
/// the number of letters consumed and sets `*invalid` to 1 if any of them is outside the alphabet.
size_t wv_base64url_decode_bulk(const uint8_t *in, size_t length, uint8_t *out, size_t out_capacity, int *invalid);

/// Checks whole groups of 32 letters against the alphabet; returns the number checked and sets `*invalid` to 1
/// if any of them is outside it.
size_t wv_base64url_check_bulk(const uint8_t *in, size_t length, int *invalid);

#endif
