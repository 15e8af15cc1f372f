// A C interface to simdjson's On-Demand parser: walks a whole JSON text and reports it as events, the way yajl's
// callbacks do, so that Swift (which cannot call C++ here) builds its tree from either parser with one builder.
#ifndef WV_JSON_SCAN_H
#define WV_JSON_SCAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One callback per token, each given the caller's context; returning 0 stops the walk.
/// Strings and member names arrive unescaped and valid UTF-8; numbers as their literal text, checked against
/// JSON's grammar. The pointers are valid only during the call.
typedef struct wv_json_events {
    int (*null_value)(void *context);
    int (*boolean)(void *context, int value);
    int (*number)(void *context, const char *literal, size_t length);
    int (*string)(void *context, const unsigned char *text, size_t length);
    int (*start_object)(void *context);
    int (*member_name)(void *context, const unsigned char *text, size_t length);
    int (*end_object)(void *context);
    int (*start_array)(void *context);
    int (*end_array)(void *context);
    /// The string of the top-level member named by wv_json_scan's `raw_member`, exactly as written between its
    /// quotes (escapes not decoded; the text is valid UTF-8 without raw control characters). Returning
    /// WV_JSON_WANT_UNESCAPED asks for it again, unescaped, through `string`.
    int (*raw_string)(void *context, const unsigned char *text, size_t length);
} wv_json_events;

/// What `raw_string` returns to be given the string unescaped.
#define WV_JSON_WANT_UNESCAPED 2

typedef enum wv_json_scan_status {
    /// The whole text was one valid JSON value and every event returned nonzero.
    WV_JSON_SCAN_OK = 0,
    /// simdjson refused the text: a syntax error, invalid UTF-8, an unpaired surrogate escape, a number outside
    /// 64-bit integers and doubles, or nesting past its own limit. No reason is given: simdjson reports no position.
    WV_JSON_SCAN_REFUSED = 1,
    /// An event returned 0.
    WV_JSON_SCAN_STOPPED = 2,
    /// Memory for the parser could not be had.
    WV_JSON_SCAN_NO_MEMORY = 3,
    /// This build or this CPU has no fast simdjson kernel (x86-64 without AVX2, or another architecture).
    WV_JSON_SCAN_UNAVAILABLE = 4,
} wv_json_scan_status;

/// Walks the JSON text `input[0..<length]`, which need not be padded or terminated. When `raw_member` is not NULL,
/// a string value of the top-level object's member of that name goes to `raw_string` rather than `string`: a
/// megabyte string is then not copied to be unescaped when it has no escapes.
wv_json_scan_status wv_json_scan(const char *input, size_t length, const char *raw_member,
                                 const wv_json_events *events, void *context);

/// The offset of the first `needle` in `text[0..<length]`, or -1 if there is none: glibc's memmem, which Swift
/// cannot see.
long wv_json_find(const char *text, size_t length, const char *needle, size_t needle_length);

#ifdef __cplusplus
}
#endif

#endif
