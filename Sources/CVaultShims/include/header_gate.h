#ifndef WV_HEADER_GATE_H
#define WV_HEADER_GATE_H
#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

/// Why the header gate refused a request; 0 when it did not. The gate hands libmicrohttpd, instead of the refused
/// rest, one field `X-WalletVault-Refused: <code>` and the end of the section, so the verdict travels with the very
/// request libmicrohttpd frames; `wv_gate_refusal_of` reads it back.
typedef enum wv_gate_refusal {
    WV_GATE_OK = 0,
    WV_GATE_EMPTY_NAME,       // a line `: value` (an empty name is not a token)
    WV_GATE_BAD_NAME,         // a name byte that is not a token character (space before the colon included)
    WV_GATE_NO_COLON,         // a field line without a colon
    WV_GATE_BAD_VALUE,        // NUL, bare CR, DEL or another control byte but HTAB in a value
    WV_GATE_BARE_LF,          // a field line ended by LF alone
    WV_GATE_OBS_FOLD,         // a line starting with SP or HTAB (obs-fold, RFC 9112 §5.2)
    WV_GATE_BAD_LENGTH,       // Content-Length empty, not digits, or past 2^63 - 1
    WV_GATE_LENGTH_TWICE,     // two Content-Length fields
    WV_GATE_LENGTH_AND_CODING,// Content-Length and Transfer-Encoding
    WV_GATE_CODING_IN_HTTP10, // Transfer-Encoding in HTTP/1.0
    WV_GATE_CHUNKED_NOT_LAST, // Transfer-Encoding whose final coding is not chunked (RFC 9112 §6.3: 400)
    WV_GATE_UNKNOWN_CODING,   // chunked after another coding, or twice: 501
    WV_GATE_HOST_COUNT,       // HTTP/1.1 without Host, or two Host fields
    WV_GATE_BAD_HOST,         // a Host that is not uri-host [":" port] (RFC 9112 §3.2)
    WV_GATE_TOO_LARGE,        // the header section as sent is past its limit in bytes or fields: 431
    WV_GATE_RESERVED_NAME,    // the client sent the gate's own field name
} wv_gate_refusal;

/// The size of a header section the gate lets through, counted as the client sent it: request line, fields and
/// line ends. Past it the answer is 431.
#define WV_GATE_HEADER_LIMIT (16 * 1024)
/// The most header fields a section may hold: libmicrohttpd keeps an entry of 56 bytes per field beside the section in
/// its connection pool, so a limit in bytes alone would let 4-byte fields overrun it. Past it the answer is 431 too.
#define WV_GATE_FIELD_LIMIT 100

/// Puts the gate in front of libmicrohttpd's reads on `connection` (called when it opens, before its first read).
/// Returns 0, or -1 when the connection's state cannot be had; the caller then shuts the connection.
int wv_gate_open(struct MHD_Connection *connection, int tls);

/// Takes the gate away from the connection (called when it closes, before libmicrohttpd closes its descriptor).
void wv_gate_close(struct MHD_Connection *connection);

/// The refusal the gate attached to the request libmicrohttpd has just parsed, or `WV_GATE_OK`.
wv_gate_refusal wv_gate_refusal_of(struct MHD_Connection *connection);

/// The status a refusal is answered with: 400, 431 or 501.
int wv_gate_status(wv_gate_refusal refusal);

/// Why, in a sentence for the answer and the log (never quoting the request).
const char *wv_gate_reason(wv_gate_refusal refusal);

#endif
