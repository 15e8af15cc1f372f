#include "mhd_shims.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

struct MHD_Daemon *wv_mhd_start(const wv_mhd_options *o,
                                MHD_AccessHandlerCallback handler, void *handler_cls,
                                MHD_RequestCompletedCallback completed, void *completed_cls,
                                MHD_NotifyConnectionCallback connection_notify) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons(o->port);
    if (inet_pton(AF_INET, o->host, &address.sin_addr) != 1) {
        errno = EINVAL;
        return NULL;
    }
    unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    struct MHD_OptionItem items[20];
    size_t count = 0;
#define WV_OPTION(option, value, pointer) items[count++] = (struct MHD_OptionItem){ (option), (intptr_t)(value), (pointer) }
    WV_OPTION(MHD_OPTION_SOCK_ADDR, 0, &address);
    WV_OPTION(MHD_OPTION_THREAD_POOL_SIZE, o->threads, NULL);
    WV_OPTION(MHD_OPTION_CONNECTION_LIMIT, o->connection_limit, NULL);
    WV_OPTION(MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->per_ip_connection_limit, NULL);
    WV_OPTION(MHD_OPTION_CONNECTION_TIMEOUT, o->connection_timeout_seconds, NULL);
    WV_OPTION(MHD_OPTION_CONNECTION_MEMORY_LIMIT, o->connection_memory_limit, NULL);
    // No MHD_OPTION_LISTENING_ADDRESS_REUSE: its SO_REUSEPORT lets the kernel hand a port-0 request a
    // port another server already listens on, and the two would then share connections.
    WV_OPTION(MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls);
    // At -1, libmicrohttpd 0.9.75 refuses whitespace between a field name and its colon (RFC 9112 §5.1:
    // `Content-Length : 5` must be 400, not honoured by one hop and ignored by another) and changes nothing else;
    // its checks at +1 (a missing Host) answer twice on the wire, so Host is checked in the request path instead.
    WV_OPTION(MHD_OPTION_STRICT_FOR_CLIENT, -1, NULL);
    if (o->uri_log != NULL) WV_OPTION(MHD_OPTION_URI_LOG_CALLBACK, o->uri_log, handler_cls);
    if (connection_notify != NULL) WV_OPTION(MHD_OPTION_NOTIFY_CONNECTION, connection_notify, handler_cls);
    if (o->tls_certificate_pem != NULL && o->tls_key_pem != NULL) {
        flags |= MHD_USE_TLS;
        WV_OPTION(MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)o->tls_certificate_pem);
        WV_OPTION(MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)o->tls_key_pem);
        // Without it GnuTLS's defaults apply: TLS 1.0 and 1.1, CBC-SHA1 and CCM suites, secp521r1 and X448.
        if (o->tls_priorities != NULL) WV_OPTION(MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)o->tls_priorities);
    }
    WV_OPTION(MHD_OPTION_END, 0, NULL);
#undef WV_OPTION
    return MHD_start_daemon(flags, o->port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_ARRAY, items, MHD_OPTION_END);
}

uint16_t wv_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

void wv_mhd_quiesce(struct MHD_Daemon *daemon) {
    // The daemon hands the listening socket back instead of closing it; close it so the
    // kernel stops queueing new connections that would never be served.
    MHD_socket listening = MHD_quiesce_daemon(daemon);
    if (listening != MHD_INVALID_SOCKET) close(listening);
}

int wv_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        return inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size) ? 0 : -1;
    }
    if (address->sa_family == AF_INET6) {
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size) ? 0 : -1;
    }
    return -1;
}

int wv_mhd_shutdown_connection(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL || info->connect_fd == MHD_INVALID_SOCKET) return -1;
    return shutdown(info->connect_fd, SHUT_RDWR);
}

int wv_mhd_send_before_body_end(struct MHD_Connection *connection, const void *bytes, size_t length) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL || info->connect_fd == MHD_INVALID_SOCKET) return -1;
    size_t sent = 0;
    while (sent < length) {
        ssize_t written = send(info->connect_fd, (const char *)bytes + sent, length - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return -1;
        sent += (size_t)written;
    }
    // The answer is complete: the client reads it, then the end of the stream, while the rest of its body is drained.
    shutdown(info->connect_fd, SHUT_WR);
    return 0;
}

int wv_mhd_set_cork(struct MHD_Connection *connection, int on) {
    int fd = wv_mhd_connection_fd(connection);
    if (fd < 0) return -1;
    return setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}

int wv_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL || info->connect_fd == MHD_INVALID_SOCKET) return -1;
    return info->connect_fd;
}

int wv_hangup_watch_create(int *wake_fd) {
    int watch_fd = epoll_create1(EPOLL_CLOEXEC);
    if (watch_fd < 0) return -1;
    int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake < 0) {
        close(watch_fd);
        return -1;
    }
    struct epoll_event event = { .events = EPOLLIN, .data.u64 = 0 };
    if (epoll_ctl(watch_fd, EPOLL_CTL_ADD, wake, &event) != 0) {
        close(wake);
        close(watch_fd);
        return -1;
    }
    *wake_fd = wake;
    return watch_fd;
}

int wv_hangup_watch_add(int watch_fd, int fd, uint64_t id) {
    // Not EPOLLIN: a client may pipeline its next request behind the held one, which is no hang-up.
    struct epoll_event event = { .events = EPOLLRDHUP | EPOLLONESHOT, .data.u64 = id };
    return epoll_ctl(watch_fd, EPOLL_CTL_ADD, fd, &event);
}

void wv_hangup_watch_remove(int watch_fd, int fd) {
    struct epoll_event unused;
    epoll_ctl(watch_fd, EPOLL_CTL_DEL, fd, &unused);
}

int wv_hangup_watch_wait(int watch_fd, int wake_fd, uint64_t *ids, int capacity, int timeout_ms) {
    struct epoll_event events[256];
    int room = capacity < 256 ? capacity : 256;
    int ready = epoll_wait(watch_fd, events, room, timeout_ms);
    if (ready < 0) return errno == EINTR ? 0 : -1;
    for (int index = 0; index < ready; index++) {
        ids[index] = events[index].data.u64;
        if (events[index].data.u64 == 0) {
            uint64_t count;
            while (read(wake_fd, &count, sizeof count) > 0) {}
        }
    }
    return ready;
}

void wv_hangup_watch_wake(int wake_fd) {
    uint64_t one = 1;
    ssize_t written = write(wake_fd, &one, sizeof one);
    (void)written;
}
