#ifndef WV_MHD_SHIMS_H
#define WV_MHD_SHIMS_H
#include <stdint.h>
#include <stddef.h>
#include <microhttpd.h>

/// Options for `wv_mhd_start`; MHD_start_daemon is variadic and cannot be called from Swift.
typedef struct wv_mhd_options {
    const char *host;            // IPv4 literal to bind, e.g. "127.0.0.1"
    uint16_t port;               // 0 picks a free port
    unsigned int threads;        // worker thread pool size
    unsigned int connection_limit;
    unsigned int per_ip_connection_limit; // 0 = unlimited
    unsigned int connection_timeout_seconds;
    size_t connection_memory_limit;
    const char *tls_certificate_pem; // NULL for plain HTTP
    const char *tls_key_pem;         // NULL for plain HTTP
    const char *tls_priorities;      // GnuTLS priority string; NULL leaves libmicrohttpd's default
    /// Called with the request target as sent (before percent-decoding) once the request line is read; its result
    /// becomes the request's `*req_cls`. May be NULL.
    void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection);
} wv_mhd_options;

/// Shuts the connection's socket down in both directions, so libmicrohttpd's next read ends and it closes the
/// connection; safe from any thread while the connection is open (the descriptor is closed only after
/// libmicrohttpd reports the connection closed). Returns 0, or -1 when the descriptor is unknown.
int wv_mhd_shutdown_connection(struct MHD_Connection *connection);

/// Writes a complete answer straight to the connection's socket and shuts its sending side, while libmicrohttpd is
/// still reading the request's body (libmicrohttpd 0.9.75, like 1.0, queues answers only before a body or after it).
/// Plain HTTP only, called on the connection's own thread from the access handler, where libmicrohttpd writes
/// nothing. Returns 0 when every byte was taken by the kernel, -1 otherwise (then the connection must be cut).
int wv_mhd_send_before_body_end(struct MHD_Connection *connection, const void *bytes, size_t length);

/// Sets (1) or clears (0) TCP_CORK on the connection's socket: while set, the kernel sends only full segments; clearing
/// it sends what is held. Returns 0, or -1 when the descriptor is unknown or the option cannot be set.
int wv_mhd_set_cork(struct MHD_Connection *connection, int on);

/// The connection's socket descriptor, or -1.
int wv_mhd_connection_fd(struct MHD_Connection *connection);

/// An epoll set that reports held (suspended) connections whose client hung up, and an eventfd to wake its waiter.
/// libmicrohttpd does not poll a suspended connection's socket, so a client that goes away would otherwise hold its
/// slot until the hold ends. Returns the epoll descriptor, or -1; `*wake_fd` receives the eventfd.
int wv_hangup_watch_create(int *wake_fd);

/// Watches `fd` for the peer's hang-up (EPOLLRDHUP, EPOLLHUP, EPOLLERR), once, reporting `id`. Returns 0 or -1.
int wv_hangup_watch_add(int watch_fd, int fd, uint64_t id);

/// Stops watching `fd`; call before the connection resumes, while the descriptor is still its own.
void wv_hangup_watch_remove(int watch_fd, int fd);

/// Waits up to `timeout_ms` (-1 for ever) and writes the ids of hung-up sockets to `ids`; the wake eventfd reports
/// id 0 and is drained. Returns how many ids were written, 0 on a timeout, -1 on an error other than EINTR.
int wv_hangup_watch_wait(int watch_fd, int wake_fd, uint64_t *ids, int capacity, int timeout_ms);

/// Wakes a `wv_hangup_watch_wait` in progress.
void wv_hangup_watch_wake(int wake_fd);

/// Starts an epoll daemon with a thread pool; returns NULL (and sets errno) on failure.
/// `connection_notify` (may be NULL) is told when connections open and close.
struct MHD_Daemon *wv_mhd_start(const wv_mhd_options *options,
                                MHD_AccessHandlerCallback handler, void *handler_cls,
                                MHD_RequestCompletedCallback completed, void *completed_cls,
                                MHD_NotifyConnectionCallback connection_notify);

/// The port the daemon actually bound (useful when asked for port 0).
uint16_t wv_mhd_bound_port(struct MHD_Daemon *daemon);

/// Stops accepting new connections, closing the listening socket, without closing existing ones.
void wv_mhd_quiesce(struct MHD_Daemon *daemon);

/// Writes the client's IP address as text into `buffer`; returns 0 on success.
int wv_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t size);

#endif
