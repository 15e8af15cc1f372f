// The least a libmicrohttpd server can do per load, for scripts/bench_http_floor.sh (issues 30 and 31): the daemon
// started with walletvault-server's flags and limits (epoll, a pool of two workers, a 24 KiB connection pool), and an
// access handler that does nothing but answer. No session check, no storage, no headers of its own: what is left is
// the library's and the kernel's part of a load, the floor under any server built on it.
//
//   mhd_floor PORT memory FILE   every request gets FILE's bytes from one buffer read at start (a blob-cache hit)
//   mhd_floor PORT files DIR     GET /NAME is answered with DIR/NAME, opened, checked with fstat and sent with
//                                sendfile (a missed load of a body file), or 404
//
// Built by the script: cc -O2 -o mhd_floor scripts/mhd_floor.c -lmicrohttpd
#include <arpa/inet.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *body;
static size_t body_size;
static int root = -1;

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state) {
    (void)cls, (void)method, (void)version, (void)upload, (void)upload_size;
    if (*state == NULL) {  // headers only: the answer comes on the next call, as walletvault-server's does
        *state = connection;
        return MHD_YES;
    }
    struct MHD_Response *response = NULL;
    unsigned int status = MHD_HTTP_OK;
    if (root < 0) {
        response = MHD_create_response_from_buffer(body_size, body, MHD_RESPMEM_PERSISTENT);
    } else {
        int file = url[0] == '/' && strchr(url + 1, '/') == NULL ? openat(root, url + 1, O_RDONLY | O_CLOEXEC) : -1;
        struct stat info;
        if (file >= 0 && fstat(file, &info) == 0) {
            response = MHD_create_response_from_fd_at_offset64((uint64_t)info.st_size, file, 0);
        } else {
            if (file >= 0) close(file);
            status = MHD_HTTP_NOT_FOUND;
            response = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
        }
    }
    if (response == NULL) return MHD_NO;
    MHD_add_response_header(response, "Content-Type", "application/json");
    enum MHD_Result queued = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return queued;
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[2], "memory") != 0 && strcmp(argv[2], "files") != 0)) {
        fprintf(stderr, "usage: %s PORT memory FILE | PORT files DIR\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[2], "memory") == 0) {
        FILE *file = fopen(argv[3], "rb");
        if (file == NULL || fseek(file, 0, SEEK_END) != 0) return perror(argv[3]), 1;
        body_size = (size_t)ftell(file);
        rewind(file);
        body = malloc(body_size);
        if (body == NULL || fread(body, 1, body_size, file) != body_size) return perror(argv[3]), 1;
        fclose(file);
    } else if ((root = open(argv[3], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        return perror(argv[3]), 1;
    }
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, (uint16_t)atoi(argv[1]), NULL,
        NULL, answer, NULL, MHD_OPTION_SOCK_ADDR, &address, MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_CONNECTION_LIMIT, 1024u,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(24 * 1024),
        MHD_OPTION_STRICT_FOR_CLIENT, -1, MHD_OPTION_END);
    if (daemon == NULL) return fprintf(stderr, "cannot listen on port %s\n", argv[1]), 1;
    printf("listening\n");
    fflush(stdout);
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, NULL);
    int received;
    sigwait(&signals, &received);
    MHD_stop_daemon(daemon);
    return 0;
}
