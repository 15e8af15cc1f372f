// The header gate: every byte libmicrohttpd reads from a client passes through here first, decrypted under TLS, so
// a header section is judged as the client sent it, before libmicrohttpd's parser frames it (issue 29).
//
// libmicrohttpd 0.9.75 reads a plain connection with recv(2) and a TLS one with gnutls_record_recv, both through
// its PLT. This executable defines both symbols; the dynamic linker binds libmicrohttpd's calls to them, and they
// call the real functions (dlsym RTLD_NEXT). A descriptor libmicrohttpd did not register (libpq's, a test's client)
// goes straight through, as does any recv with flags. For a registered connection the gate:
//
//   * checks each header line before libmicrohttpd may read it: an empty name, obs-fold, a line without a colon, a
//     non-token name, a control byte in a value, a bare LF, a bad Content-Length, Transfer-Encoding or Host;
//   * strips the trailing whitespace RFC 9110 §5.5 says is not part of a value from Content-Length and
//     Transfer-Encoding (`5 \t` is 5, `chunked ` is chunked), so libmicrohttpd reads what the RFC reads;
//   * checks the section as a whole at its empty line (Content-Length twice or beside Transfer-Encoding, Host count);
//   * counts the section's bytes as sent and its fields (431 past WV_GATE_HEADER_LIMIT or WV_GATE_FIELD_LIMIT);
//   * follows the body's framing as the section declared it (Content-Length, or chunk sizes and trailers), only to
//     know where the next pipelined section starts; it lets only forms through that libmicrohttpd frames the same
//     way, and strips chunk extensions (RFC 9112 §7.1.1: a recipient ignores them) so none can fill libmicrohttpd's
//     buffer (a 64 KiB one got its 500).
//
// A refused section never reaches libmicrohttpd as sent: the lines before the bad one (each already checked) are
// followed by the field `X-WalletVault-Refused: <code>` and the empty line, and nothing the client sends after is
// handed over. libmicrohttpd frames that clean, bodiless stand-in, the access handler reads the code back and
// answers once, closing the connection. A refusal inside a chunked body hands libmicrohttpd `x` CRLF instead, which
// it answers with its own 400 (a chunked body cannot be answered by the application mid-way in 0.9.75).
//
// Partial lines are held back (never handed over unchecked) in the connection's carry buffer; everything else is
// judged in place in libmicrohttpd's own read buffer, so a request arriving in one read costs one pass over its
// header bytes and no copy.

#define _GNU_SOURCE
// This file defines recv itself; glibc's fortified inline recv would collide with it.
#undef _FORTIFY_SOURCE
#include "header_gate.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>

// GnuTLS's codes, spelled here because the gate does not include gnutls.h (libmicrohttpd links GnuTLS, this does not).
#define WV_GNUTLS_E_AGAIN (-28)
#define WV_GNUTLS_E_INTERRUPTED (-52)

#define WV_GATE_FIELD "X-WalletVault-Refused"
#define WV_GATE_DESCRIPTORS (1 << 20)
/// The longest chunk-size line (with its extension) or trailer line taken.
#define WV_GATE_LINE_LIMIT (16 * 1024)

enum wv_gate_mode {
    MODE_START,      // before a request line: empty lines pass (RFC 9112 §2.2), the first other byte starts one
    MODE_REQUEST,    // inside the request line: libmicrohttpd parses it; only its version is noted
    MODE_FIELDS,     // header lines, one at a time
    MODE_BODY,       // `remaining` bytes of a Content-Length body
    MODE_CHUNK_SIZE, // a chunk-size line
    MODE_CHUNK_DATA, // `remaining` bytes of chunk data
    MODE_CHUNK_CR,   // the CR after chunk data
    MODE_CHUNK_LF,   // the LF after it
    MODE_TRAILERS,   // trailer lines up to the empty line
    MODE_REFUSED,    // the stand-in is handed over; nothing more is
};

struct wv_gate {
    int fd;
    int tls;
    void *session; // the GnuTLS session libmicrohttpd reads this connection through (TLS only)
    enum wv_gate_mode mode;
    uint64_t remaining;
    // The section being read.
    size_t section_bytes;
    unsigned hosts, lengths, codings, fields;
    bool http11;
    bool last_coding_chunked; // the final coding of the last Transfer-Encoding field is chunked
    bool only_chunked;        // every Transfer-Encoding field was exactly `chunked`
    uint64_t length;
    char version_tail[8]; // the request line's last 8 bytes before its line end, for the version
    size_t version_length;
    // Held-back bytes: the first `ready` are judged and waiting for room in libmicrohttpd's buffer; the rest are an
    // unjudged partial line.
    char *carry;
    size_t carry_length, carry_capacity, ready;
};

typedef _Atomic(struct wv_gate *) wv_gate_slot;
/// The gates by descriptor, made by the first connection.
static wv_gate_slot *_Atomic wv_gates;
static ssize_t (*_Atomic real_recv)(int, void *, size_t, int);
static ssize_t (*_Atomic real_record_recv)(void *, void *, size_t);
static int (*_Atomic real_transport_get_int)(void *);

static void wv_gate_resolve(void) {
    // Idempotent: two threads racing here store the same pointers.
    if (real_recv == NULL) real_recv = (ssize_t (*)(int, void *, size_t, int))dlsym(RTLD_NEXT, "recv");
    if (real_record_recv == NULL) real_record_recv = (ssize_t (*)(void *, void *, size_t))dlsym(RTLD_NEXT, "gnutls_record_recv");
    if (real_transport_get_int == NULL) real_transport_get_int = (int (*)(void *))dlsym(RTLD_DEFAULT, "gnutls_transport_get_int");
}

static struct wv_gate *wv_gate_for(int fd) {
    wv_gate_slot *gates = atomic_load_explicit(&wv_gates, memory_order_acquire);
    if (gates == NULL || fd < 0 || fd >= WV_GATE_DESCRIPTORS) return NULL;
    return atomic_load_explicit(&gates[fd], memory_order_acquire);
}

int wv_gate_open(struct MHD_Connection *connection, int tls) {
    wv_gate_resolve();
    if (real_recv == NULL || (tls && (real_record_recv == NULL || real_transport_get_int == NULL))) return -1;
    if (atomic_load(&wv_gates) == NULL) {
        // Zeroed pages cost nothing until a descriptor's slot is touched.
        wv_gate_slot *fresh = calloc(WV_GATE_DESCRIPTORS, sizeof *fresh);
        if (fresh == NULL) return -1;
        wv_gate_slot *expected = NULL;
        if (!atomic_compare_exchange_strong(&wv_gates, &expected, fresh)) free(fresh);
    }
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL || info->connect_fd < 0 || info->connect_fd >= WV_GATE_DESCRIPTORS) return -1;
    struct wv_gate *gate = calloc(1, sizeof *gate);
    if (gate == NULL) return -1;
    gate->fd = info->connect_fd;
    gate->tls = tls;
    gate->mode = MODE_START;
    if (tls) {
        const union MHD_ConnectionInfo *session = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        if (session == NULL || session->tls_session == NULL) {
            free(gate);
            return -1;
        }
        gate->session = session->tls_session;
    }
    atomic_store_explicit(&wv_gates[gate->fd], gate, memory_order_release);
    return 0;
}

void wv_gate_close(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL || wv_gate_for(info->connect_fd) == NULL) return;
    // Only this connection's thread reads through its gate, and it is the one closing it.
    struct wv_gate *gate = atomic_exchange_explicit(&wv_gates[info->connect_fd], NULL, memory_order_acq_rel);
    if (gate == NULL) return;
    free(gate->carry);
    free(gate);
}

wv_gate_refusal wv_gate_refusal_of(struct MHD_Connection *connection) {
    const char *code = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, WV_GATE_FIELD);
    if (code == NULL) return WV_GATE_OK;
    int value = atoi(code);
    // A code the gate did not write cannot be here (the gate refuses the field name from clients), but fail closed.
    return value > 0 && value <= WV_GATE_RESERVED_NAME ? (wv_gate_refusal)value : WV_GATE_BAD_NAME;
}

int wv_gate_status(wv_gate_refusal refusal) {
    switch (refusal) {
    case WV_GATE_TOO_LARGE: return 431;
    case WV_GATE_UNKNOWN_CODING: return 501;
    default: return 400;
    }
}

const char *wv_gate_reason(wv_gate_refusal refusal) {
    switch (refusal) {
    case WV_GATE_OK: return "";
    case WV_GATE_EMPTY_NAME: return "a header field has an empty name";
    case WV_GATE_BAD_NAME: return "a header field name holds a byte that is not a token character";
    case WV_GATE_NO_COLON: return "a header line has no colon";
    case WV_GATE_BAD_VALUE: return "a header field value holds a NUL, CR or other control byte";
    case WV_GATE_BARE_LF: return "a header line ends in a bare LF";
    case WV_GATE_OBS_FOLD: return "a header field is folded onto a second line (obs-fold)";
    case WV_GATE_BAD_LENGTH: return "Content-Length is not a length (digits up to 2^63 - 1)";
    case WV_GATE_LENGTH_TWICE: return "Content-Length is given more than once";
    case WV_GATE_LENGTH_AND_CODING: return "Content-Length and Transfer-Encoding together";
    case WV_GATE_CODING_IN_HTTP10: return "Transfer-Encoding in an HTTP/1.0 request";
    case WV_GATE_CHUNKED_NOT_LAST: return "the final transfer coding is not chunked";
    case WV_GATE_UNKNOWN_CODING: return "the only transfer coding accepted is chunked";
    case WV_GATE_HOST_COUNT: return "an HTTP/1.1 request needs exactly one Host field";
    case WV_GATE_BAD_HOST: return "the Host field is not a host and port";
    case WV_GATE_TOO_LARGE: return "the header section is larger than 16 KiB or 100 fields";
    case WV_GATE_RESERVED_NAME: return "a header field name is reserved";
    }
    return "malformed request";
}

static bool wv_is_token(unsigned char c) {
    static const char *const extra = "!#$%&'*+-.^_`|~";
    if ((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) return true;
    return c != 0 && strchr(extra, c) != NULL;
}

static bool wv_is_ows(char c) { return c == ' ' || c == '\t'; }

/// Whether `bytes` hold a control byte other than HTAB, or DEL. Branch-free over the whole value so the compiler
/// vectorizes it: a bearer token is most of a request's header bytes, and a loop that stopped at each byte to decide
/// cost a D1 mint some 0.6 µs.
static bool wv_has_control(const char *bytes, size_t length) {
    unsigned char found = 0;
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)bytes[i];
        found |= (unsigned char)(((c < 0x20) & (c != '\t')) | (c == 0x7f));
    }
    return found != 0;
}

/// uri-host [":" port] (RFC 3986 §3.2.2: reg-name, IPv4, or an IP-literal in brackets); empty is allowed
/// (RFC 9110 §7.2, a target without authority). A looser set than the grammar, but never a space, `@`, `/`, `?`,
/// `#`, `\`, a quote or a byte past 0x7E, which no host holds.
static bool wv_is_host(const char *value, size_t length) {
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)value[i];
        bool allowed = (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
                       (c != 0 && strchr("-._~%!$&'()*+,;=:[]", c) != NULL);
        if (!allowed) return false;
    }
    return true;
}

static bool wv_equals_caseless(const char *text, size_t length, const char *lower) {
    return strlen(lower) == length && strncasecmp(text, lower, length) == 0;
}

/// Judges one Transfer-Encoding value: its final coding, and whether it is exactly `chunked`.
static void wv_note_coding(struct wv_gate *gate, const char *value, size_t length) {
    gate->codings++;
    const char *comma = memrchr(value, ',', length);
    const char *last = comma == NULL ? value : comma + 1;
    size_t last_length = length - (size_t)(last - value);
    while (last_length > 0 && wv_is_ows(*last)) last++, last_length--;
    while (last_length > 0 && wv_is_ows(last[last_length - 1])) last_length--;
    gate->last_coding_chunked = wv_equals_caseless(last, last_length, "chunked");
    if (comma != NULL || !gate->last_coding_chunked) gate->only_chunked = false;
}

/// Digits only, 1 to 19 of them, at most 2^63 - 1.
static bool wv_parse_length(const char *value, size_t length, uint64_t *out) {
    if (length == 0 || length > 19) return false;
    uint64_t total = 0;
    for (size_t i = 0; i < length; i++) {
        if (value[i] < '0' || value[i] > '9') return false;
        total = total * 10 + (uint64_t)(value[i] - '0');
    }
    if (total > (uint64_t)INT64_MAX) return false;
    *out = total;
    return true;
}

/// What a field line means to the gate. `line` holds the line without its CRLF; `*kept` is set to how many of its
/// bytes are handed over (fewer when trailing whitespace of a framing field is stripped).
static wv_gate_refusal wv_judge_field(struct wv_gate *gate, const char *line, size_t length, bool trailer, size_t *kept) {
    *kept = length;
    if (wv_is_ows(line[0])) return WV_GATE_OBS_FOLD;
    const char *colon = memchr(line, ':', length);
    if (colon == NULL) return WV_GATE_NO_COLON;
    size_t name_length = (size_t)(colon - line);
    if (name_length == 0) return WV_GATE_EMPTY_NAME;
    for (size_t i = 0; i < name_length; i++) {
        if (!wv_is_token((unsigned char)line[i])) return WV_GATE_BAD_NAME;
    }
    const char *value = colon + 1;
    size_t value_length = length - name_length - 1;
    if (wv_has_control(value, value_length)) return WV_GATE_BAD_VALUE;
    if (trailer) return WV_GATE_OK;
    while (value_length > 0 && wv_is_ows(value[0])) value++, value_length--;
    size_t trimmed = value_length;
    while (trimmed > 0 && wv_is_ows(value[trimmed - 1])) trimmed--;
    switch (name_length) {
    case 4:
        if (strncasecmp(line, "host", 4) == 0) {
            gate->hosts++;
            if (!wv_is_host(value, trimmed)) return WV_GATE_BAD_HOST;
        }
        break;
    case 14:
        if (strncasecmp(line, "content-length", 14) == 0) {
            gate->lengths++;
            if (!wv_parse_length(value, trimmed, &gate->length)) return WV_GATE_BAD_LENGTH;
            *kept = (size_t)(value - line) + trimmed;
        }
        break;
    case 17:
        if (strncasecmp(line, "transfer-encoding", 17) == 0) {
            wv_note_coding(gate, value, trimmed);
            *kept = (size_t)(value - line) + trimmed;
        }
        break;
    case sizeof WV_GATE_FIELD - 1:
        if (strncasecmp(line, WV_GATE_FIELD, name_length) == 0) return WV_GATE_RESERVED_NAME;
        break;
    }
    return WV_GATE_OK;
}

/// The section-wide rules, at its empty line.
static wv_gate_refusal wv_judge_section(const struct wv_gate *gate) {
    if (gate->hosts > 1 || (gate->http11 && gate->hosts == 0)) return WV_GATE_HOST_COUNT;
    if (gate->lengths > 1) return WV_GATE_LENGTH_TWICE;
    if (gate->codings > 0) {
        if (gate->lengths > 0) return WV_GATE_LENGTH_AND_CODING;
        if (!gate->http11) return WV_GATE_CODING_IN_HTTP10;
        if (!gate->last_coding_chunked) return WV_GATE_CHUNKED_NOT_LAST;
        if (gate->codings > 1 || !gate->only_chunked) return WV_GATE_UNKNOWN_CODING;
    }
    return WV_GATE_OK;
}

static void wv_begin_section(struct wv_gate *gate) {
    gate->mode = MODE_REQUEST;
    gate->section_bytes = 0;
    gate->hosts = gate->lengths = gate->codings = gate->fields = 0;
    gate->http11 = false;
    gate->last_coding_chunked = false;
    gate->only_chunked = true;
    gate->length = 0;
    gate->version_length = 0;
}

/// Notes the request line's bytes `[from, to)` for its version: only the last 8 before the line end matter.
static void wv_note_request_bytes(struct wv_gate *gate, const char *from, const char *to) {
    size_t count = (size_t)(to - from);
    if (count >= sizeof gate->version_tail) {
        memcpy(gate->version_tail, to - sizeof gate->version_tail, sizeof gate->version_tail);
        gate->version_length = sizeof gate->version_tail;
        return;
    }
    size_t keep = sizeof gate->version_tail - count;
    if (gate->version_length < keep) keep = gate->version_length;
    memmove(gate->version_tail, gate->version_tail + gate->version_length - keep, keep);
    memcpy(gate->version_tail + keep, from, count);
    gate->version_length = keep + count;
}

static bool wv_reserve(struct wv_gate *gate, size_t capacity) {
    if (gate->carry_capacity >= capacity) return true;
    size_t grown = gate->carry_capacity < 4096 ? 4096 : gate->carry_capacity;
    while (grown < capacity) grown *= 2;
    char *carry = realloc(gate->carry, grown);
    if (carry == NULL) return false;
    gate->carry = carry;
    gate->carry_capacity = grown;
    return true;
}

/// Judges `bytes[0, count)`, rewriting in place: the judged output is compacted to the front and its length
/// returned. A partial line left at the end is held back (`*tail`, its start). `capacity` is how much of `bytes` may
/// be written; a refusal's stand-in is written there, and what does not fit is put in the carry as ready.
static size_t wv_judge(struct wv_gate *gate, char *bytes, size_t count, size_t capacity, size_t *tail, bool *overflow) {
    size_t in = 0, out = 0;
    wv_gate_refusal refusal = WV_GATE_OK;
    bool in_body = false;
    *tail = count;
    *overflow = false;
    while (in < count && refusal == WV_GATE_OK) {
        switch (gate->mode) {
        case MODE_REFUSED:
            in = count;
            break;
        case MODE_START:
            if (bytes[in] == '\r' || bytes[in] == '\n') {
                bytes[out++] = bytes[in++];
                break;
            }
            wv_begin_section(gate);
            break;
        case MODE_REQUEST: {
            // libmicrohttpd parses (and bounds) the request line; the gate only reads its version.
            const char *end = memchr(bytes + in, '\n', count - in);
            size_t stop = end == NULL ? count : (size_t)(end - bytes);
            size_t content = stop > in && end != NULL && bytes[stop - 1] == '\r' ? stop - 1 : stop;
            wv_note_request_bytes(gate, bytes + in, bytes + content);
            size_t through = end == NULL ? count : stop + 1;
            gate->section_bytes += through - in;
            if (out != in) memmove(bytes + out, bytes + in, through - in);
            out += through - in;
            in = through;
            if (end != NULL) {
                gate->http11 = gate->version_length == 8 && memcmp(gate->version_tail, "HTTP/1.1", 8) == 0;
                gate->mode = MODE_FIELDS;
            }
            break;
        }
        case MODE_FIELDS:
        case MODE_TRAILERS:
        case MODE_CHUNK_SIZE: {
            const char *end = memchr(bytes + in, '\n', count - in);
            size_t left = gate->section_bytes < WV_GATE_HEADER_LIMIT ? WV_GATE_HEADER_LIMIT - gate->section_bytes : 0;
            size_t limit = gate->mode == MODE_FIELDS ? left : WV_GATE_LINE_LIMIT;
            if (end == NULL) {
                if (count - in > limit) {
                    refusal = gate->mode == MODE_FIELDS ? WV_GATE_TOO_LARGE : WV_GATE_BAD_VALUE;
                    in_body = gate->mode != MODE_FIELDS;
                    break;
                }
                *tail = in;
                in = count;
                break;
            }
            size_t line_end = (size_t)(end - bytes) + 1; // past the LF
            size_t line_length = line_end - in;
            if (line_length > limit) {
                refusal = gate->mode == MODE_FIELDS ? WV_GATE_TOO_LARGE : WV_GATE_BAD_VALUE;
                in_body = gate->mode != MODE_FIELDS;
                break;
            }
            if (line_length < 2 || bytes[line_end - 2] != '\r') {
                refusal = WV_GATE_BARE_LF;
                in_body = gate->mode != MODE_FIELDS;
                break;
            }
            const char *line = bytes + in;
            size_t content = line_length - 2;
            size_t kept = content;
            if (gate->mode == MODE_CHUNK_SIZE) {
                // 1 to 15 hex digits (libmicrohttpd reads up to `;` or the CR and refuses anything else in them), then
                // nothing or an extension, which is dropped.
                size_t digits = 0;
                uint64_t size = 0;
                while (digits < content && digits < 16) {
                    char c = line[digits];
                    int nibble = (c >= '0' && c <= '9') ? c - '0' : ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') ? (c | 0x20) - 'a' + 10 : -1;
                    if (nibble < 0) break;
                    size = size * 16 + (uint64_t)nibble;
                    digits++;
                }
                bool ok = digits > 0 && digits < 16 && (digits == content || line[digits] == ';');
                for (size_t i = digits; ok && i < content; i++) {
                    unsigned char c = (unsigned char)line[i];
                    if ((c < 0x20 && c != '\t') || c == 0x7f) ok = false;
                }
                if (!ok) {
                    refusal = WV_GATE_BAD_VALUE;
                    in_body = true;
                    break;
                }
                memmove(bytes + out, line, digits);
                out += digits;
                bytes[out++] = '\r';
                bytes[out++] = '\n';
                in = line_end;
                gate->remaining = size;
                gate->mode = size == 0 ? MODE_TRAILERS : MODE_CHUNK_DATA;
                gate->section_bytes = 0;
                break;
            }
            if (gate->mode == MODE_FIELDS) gate->section_bytes += line_length;
            if (content == 0) {
                if (gate->mode == MODE_FIELDS) {
                    refusal = wv_judge_section(gate);
                    if (refusal != WV_GATE_OK) break;
                    gate->remaining = gate->length;
                    gate->mode = gate->codings > 0 ? MODE_CHUNK_SIZE : gate->length > 0 ? MODE_BODY : MODE_START;
                } else {
                    gate->mode = MODE_START;
                }
            } else {
                if (gate->mode == MODE_FIELDS && ++gate->fields > WV_GATE_FIELD_LIMIT) {
                    refusal = WV_GATE_TOO_LARGE;
                    break;
                }
                if (gate->mode == MODE_TRAILERS) gate->section_bytes += line_length;
                if (gate->mode == MODE_TRAILERS && gate->section_bytes > WV_GATE_LINE_LIMIT) {
                    refusal = WV_GATE_TOO_LARGE;
                    in_body = true;
                    break;
                }
                refusal = wv_judge_field(gate, line, content, gate->mode == MODE_TRAILERS, &kept);
                if (refusal != WV_GATE_OK) {
                    in_body = gate->mode == MODE_TRAILERS;
                    break;
                }
            }
            // In place unless an earlier line shrank: most sections are handed over as they came.
            if (bytes + out != line) memmove(bytes + out, line, kept);
            out += kept;
            bytes[out++] = '\r';
            bytes[out++] = '\n';
            in = line_end;
            break;
        }
        case MODE_BODY:
        case MODE_CHUNK_DATA: {
            size_t take = count - in;
            if ((uint64_t)take > gate->remaining) take = (size_t)gate->remaining;
            if (out != in) memmove(bytes + out, bytes + in, take);
            out += take;
            in += take;
            gate->remaining -= take;
            if (gate->remaining == 0) gate->mode = gate->mode == MODE_BODY ? MODE_START : MODE_CHUNK_CR;
            break;
        }
        case MODE_CHUNK_CR:
        case MODE_CHUNK_LF:
            if (bytes[in] != (gate->mode == MODE_CHUNK_CR ? '\r' : '\n')) {
                refusal = WV_GATE_BAD_VALUE;
                in_body = true;
                break;
            }
            bytes[out++] = bytes[in++];
            gate->mode = gate->mode == MODE_CHUNK_CR ? MODE_CHUNK_LF : MODE_CHUNK_SIZE;
            break;
        }
    }
    if (refusal == WV_GATE_OK) return out;
    // The stand-in: a clean end of the section carrying the code, or inside a body a chunk size libmicrohttpd refuses.
    char stand_in[64];
    int length = in_body ? (int)strlen(strcpy(stand_in, "x\r\n"))
                         : snprintf(stand_in, sizeof stand_in, WV_GATE_FIELD ": %d\r\n\r\n", (int)refusal);
    gate->mode = MODE_REFUSED;
    *tail = count;
    size_t fits = capacity - out < (size_t)length ? capacity - out : (size_t)length;
    memcpy(bytes + out, stand_in, fits);
    out += fits;
    if (fits < (size_t)length) {
        // Only when judging in libmicrohttpd's buffer, whose carry is then empty.
        if (wv_reserve(gate, (size_t)length - fits)) {
            memcpy(gate->carry, stand_in + fits, (size_t)length - fits);
            gate->carry_length = gate->ready = (size_t)length - fits;
        }
        *overflow = true;
    }
    return out;
}

enum { SOURCE_AGAIN = -1000, SOURCE_FAILED = -1001 };

/// One read from the connection itself: bytes, 0 at its end, SOURCE_AGAIN when nothing is there, or SOURCE_FAILED
/// with `*failure` the value to hand libmicrohttpd back (errno set for recv).
static ssize_t wv_source(struct wv_gate *gate, void *into, size_t size, ssize_t *failure) {
    if (gate->tls) {
        ssize_t got = real_record_recv(gate->session, into, size);
        if (got == WV_GNUTLS_E_AGAIN || got == WV_GNUTLS_E_INTERRUPTED) return SOURCE_AGAIN;
        if (got < 0) *failure = got;
        return got < 0 ? SOURCE_FAILED : got;
    }
    ssize_t got = real_recv(gate->fd, into, size, 0);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return SOURCE_AGAIN;
    if (got < 0) *failure = -1;
    return got < 0 ? SOURCE_FAILED : got;
}

static ssize_t wv_again(const struct wv_gate *gate) {
    if (gate->tls) return WV_GNUTLS_E_AGAIN;
    errno = EAGAIN;
    return -1;
}

/// libmicrohttpd's read of up to `size` bytes, through the gate. Returns fewer than asked only when the connection
/// has nothing more (libmicrohttpd then waits for it to become readable again, edge-triggered), so bytes held back
/// as judged are handed over by filling the buffer, which makes libmicrohttpd read again.
static ssize_t wv_gate_read(struct wv_gate *gate, char *buffer, size_t size) {
    size_t out = 0;
    ssize_t failure = -1;
    for (;;) {
        if (gate->ready > 0) {
            size_t take = gate->ready < size - out ? gate->ready : size - out;
            memcpy(buffer + out, gate->carry, take);
            memmove(gate->carry, gate->carry + take, gate->carry_length - take);
            gate->carry_length -= take;
            gate->ready -= take;
            out += take;
            if (out == size) return (ssize_t)out;
        }
        if (gate->mode == MODE_REFUSED) {
            // Read and drop what the client still sends, so closing does not reset the connection before the answer
            // is read; hand nothing over.
            char sink[4096];
            ssize_t got = 0;
            for (int round = 0; round < 16 && (got = wv_source(gate, sink, sizeof sink, &failure)) > 0; round++) {}
            if (out > 0) return (ssize_t)out;
            return got == 0 ? 0 : wv_again(gate);
        }
        size_t asked;
        ssize_t got;
        if (gate->carry_length == 0) {
            asked = size - out;
            got = wv_source(gate, buffer + out, asked, &failure);
            if (got > 0) {
                size_t tail;
                bool overflow;
                size_t judged = wv_judge(gate, buffer + out, (size_t)got, asked, &tail, &overflow);
                if (tail < (size_t)got) {
                    // Held back until its line is complete; the carry was empty.
                    if (!wv_reserve(gate, (size_t)got - tail + 4096)) {
                        errno = ENOMEM;
                        return out > 0 ? (ssize_t)out : -1;
                    }
                    memcpy(gate->carry, buffer + out + tail, (size_t)got - tail);
                    gate->carry_length = (size_t)got - tail;
                    gate->ready = 0;
                }
                out += judged;
                if (overflow) return (ssize_t)size;
            }
        } else {
            // A partial line is held back: read behind it and judge it again with what came.
            asked = 4096;
            if (!wv_reserve(gate, gate->carry_length + asked + 64)) {
                errno = ENOMEM;
                return out > 0 ? (ssize_t)out : -1;
            }
            got = wv_source(gate, gate->carry + gate->carry_length, asked, &failure);
            if (got > 0) {
                size_t count = gate->carry_length + (size_t)got;
                size_t tail;
                bool overflow;
                size_t judged = wv_judge(gate, gate->carry, count, gate->carry_capacity, &tail, &overflow);
                memmove(gate->carry + judged, gate->carry + tail, count - tail);
                gate->ready = judged;
                gate->carry_length = judged + (count - tail);
                continue;
            }
        }
        if (got == 0) {
            // The client's end: a held-back partial line is dropped, libmicrohttpd sees the end after what it has.
            gate->carry_length = gate->ready;
            return (ssize_t)out;
        }
        if (got == SOURCE_FAILED) {
            if (out > 0) return (ssize_t)out;
            return failure;
        }
        if (got == SOURCE_AGAIN) {
            if (gate->ready > 0 && out < size) continue;
            return out > 0 ? (ssize_t)out : wv_again(gate);
        }
        if ((size_t)got < asked) {
            // A short plain read means the socket is empty (libmicrohttpd reads it so too). A short TLS read may be one
            // record of several, and libmicrohttpd keeps reading TLS after one: handing over what there is is enough,
            // but nothing handed over must not read as "nothing there" until GnuTLS says so.
            if (gate->ready > 0 && out < size) continue;
            if (out > 0) return (ssize_t)out;
            if (!gate->tls) return wv_again(gate);
            continue;
        }
        if (out == size) return (ssize_t)out;
    }
}

ssize_t recv(int fd, void *buffer, size_t size, int flags) {
    if (real_recv == NULL) wv_gate_resolve();
    struct wv_gate *gate = flags == 0 ? wv_gate_for(fd) : NULL;
    if (gate == NULL || gate->tls || size == 0) return real_recv(fd, buffer, size, flags);
    return wv_gate_read(gate, buffer, size);
}

ssize_t gnutls_record_recv(void *session, void *buffer, size_t size) {
    if (real_record_recv == NULL) wv_gate_resolve();
    // libmicrohttpd sets each session's transport to its descriptor (gnutls_transport_set_int).
    struct wv_gate *gate = wv_gates == NULL ? NULL : wv_gate_for(real_transport_get_int(session));
    // A session of another client of GnuTLS in this process whose transport happens to read as the same number is not
    // this connection's.
    if (gate == NULL || !gate->tls || gate->session != session || size == 0) return real_record_recv(session, buffer, size);
    return wv_gate_read(gate, buffer, size);
}
