/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client's statistics for Prometheus to scrape: an HTTP endpoint on the
 * client's libev loop (plain sockets and ev_io, no threads) serving
 * GET /metrics, rendered by redlock_stats_format_prometheus(). As a demo it
 * holds the lock "stats-example", auto-extended, while it serves (taken
 * again a second after it is lost).
 *
 *   stats_exporter CONFIG ADDRESS:PORT   # serve until SIGINT or SIGTERM
 *   stats_exporter CONFIG --once         # take and release the lock once,
 *                                        # print the exposition, exit
 *
 * CONFIG may be "-" for $REDLOCK_CONFIG. ADDRESS is a numeric IPv4 address
 * (127.0.0.1: keep the endpoint on loopback, or behind what guards it).
 * A request is read up to 4 KiB and 5 s; at most 16 are served at once.
 * Exits 0 after a signal (or --once done), 1 on an error.
 */
#define _POSIX_C_SOURCE 200809L
#include <redlock/redlock.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RESOURCE "stats-example"
#define REQUEST_MAX 4096 /* a scrape's request is a few hundred bytes */
#define CONNECTIONS_MAX 16
#define REQUEST_TIMEOUT 5.0

typedef struct exporter exporter;

typedef struct conn {
    exporter *ex;
    int fd;
    ev_io io;
    ev_timer timeout;
    char request[REQUEST_MAX + 1];
    size_t got;
    char *response; /* malloc'd once the request is read */
    size_t len, sent;
} conn;

struct exporter {
    struct ev_loop *loop;
    redlock_config *cfg;
    redlock_client *client;
    redlock_lock *lock;
    int listen_fd;
    ev_io accept_io;
    ev_signal sigint, sigterm;
    ev_timer retry;
    conn *conns[CONNECTIONS_MAX];
    int once; /* --once: release, print, stop */
    int status;
};

static void take_lock(exporter *ex);

/* --- The lock held as a demo ------------------------------------------- */

static void on_lost(int status, redlock_lock *lock, void *arg)
{
    (void)lock; /* ex->lock, freed before the next acquire */
    exporter *ex = arg;
    fprintf(stderr, "stats_exporter: lock lost: %s\n", redlock_strerror(status));
    ev_timer_set(&ex->retry, 1.0, 0.0);
    ev_timer_start(ex->loop, &ex->retry);
}

static void print_once(exporter *ex);

static void on_released(int status, const redlock_result *result, void *arg)
{
    (void)result;
    exporter *ex = arg;
    if (status != REDLOCK_OK)
        ex->status = 1;
    redlock_lock_free(ex->lock);
    ex->lock = NULL;
    print_once(ex);
}

static void on_acquired(int status, redlock_lock *lock, const redlock_result *result, void *arg)
{
    (void)result;
    exporter *ex = arg;
    if (status == REDLOCK_ECANCELED)
        return;
    if (status != REDLOCK_OK) {
        fprintf(stderr, "stats_exporter: acquire: %s\n", redlock_strerror(status));
        if (ex->once) {
            ex->status = 1;
            print_once(ex);
            return;
        }
        ev_timer_set(&ex->retry, 1.0, 0.0);
        ev_timer_start(ex->loop, &ex->retry);
        return;
    }
    ex->lock = lock;
    int rc = ex->once ? redlock_release_async(ex->client, lock, on_released, ex)
                      : redlock_auto_extend_async(ex->client, lock, on_lost, ex);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "stats_exporter: %s\n", redlock_strerror(rc));
        ex->status = 1;
        ev_break(ex->loop, EVBREAK_ALL);
    }
}

static void on_retry(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop, (void)revents;
    exporter *ex = w->data;
    redlock_lock_free(ex->lock);
    ex->lock = NULL;
    take_lock(ex);
}

static void take_lock(exporter *ex)
{
    redlock_acquire_options opts;
    redlock_acquire_options_init(&opts);
    opts.label = "stats_exporter";
    int rc = redlock_acquire_async(ex->client, RESOURCE, strlen(RESOURCE), &opts, on_acquired, ex);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "stats_exporter: acquire: %s\n", redlock_strerror(rc));
        ev_timer_set(&ex->retry, 1.0, 0.0);
        ev_timer_start(ex->loop, &ex->retry);
    }
}

/* --- The exposition ------------------------------------------------------ */

/* The text, malloc'd, or NULL: rendered again into a buffer of the size
 * asked when the first guess is too small. */
static char *render(exporter *ex, size_t *len)
{
    static redlock_stats s; /* some 30 KiB; the loop's thread only */
    redlock_stats_init(&s);
    if (redlock_client_stats(ex->client, &s) != REDLOCK_OK)
        return NULL;
    size_t size = (size_t)64 * 1024;
    size_t needed = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        char *buf = malloc(size);
        if (buf == NULL)
            return NULL;
        int rc = redlock_stats_format_prometheus(&s, ex->cfg, NULL, buf, size, &needed);
        if (rc == REDLOCK_OK) {
            *len = needed - 1;
            return buf;
        }
        free(buf);
        if (rc != REDLOCK_ENOSPC)
            return NULL;
        size = needed;
    }
    return NULL;
}

static void print_once(exporter *ex)
{
    size_t len = 0;
    char *text = render(ex, &len);
    if (text == NULL || fwrite(text, 1, len, stdout) != len)
        ex->status = 1;
    free(text);
    ev_break(ex->loop, EVBREAK_ALL);
}

/* --- HTTP: one request per connection, answered and closed ------------- */

static void conn_close(conn *c)
{
    exporter *ex = c->ex;
    ev_io_stop(ex->loop, &c->io);
    ev_timer_stop(ex->loop, &c->timeout);
    close(c->fd);
    for (int i = 0; i < CONNECTIONS_MAX; i++)
        if (ex->conns[i] == c)
            ex->conns[i] = NULL;
    free(c->response);
    free(c);
}

static void conn_respond(conn *c, const char *status, const char *type, const char *body,
                         size_t body_len)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     status, type, body_len);
    c->response = malloc((size_t)n + body_len);
    if (c->response == NULL) {
        conn_close(c);
        return;
    }
    memcpy(c->response, head, (size_t)n);
    memcpy(c->response + n, body, body_len);
    c->len = (size_t)n + body_len;
    c->sent = 0;
    ev_io_stop(c->ex->loop, &c->io);
    ev_io_set(&c->io, c->fd, EV_WRITE);
    ev_io_start(c->ex->loop, &c->io);
}

static void conn_answer(conn *c)
{
    static const char text[] = "text/plain; charset=utf-8";
    char method[8] = "";
    char path[64] = "";
    if (sscanf(c->request, "%7s %63s HTTP/1.", method, path) != 2) {
        conn_respond(c, "400 Bad Request", text, "bad request\n", 12);
        return;
    }
    if (strcmp(method, "GET") != 0) {
        conn_respond(c, "405 Method Not Allowed", text, "GET only\n", 9);
        return;
    }
    if (strcmp(path, "/metrics") != 0 && strncmp(path, "/metrics?", 9) != 0) {
        conn_respond(c, "404 Not Found", text, "see /metrics\n", 13);
        return;
    }
    size_t len = 0;
    char *body = render(c->ex, &len);
    if (body == NULL) {
        conn_respond(c, "500 Internal Server Error", text, "no statistics\n", 14);
        return;
    }
    conn_respond(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, len);
    free(body);
}

static void on_conn(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop, (void)revents;
    conn *c = w->data;
    if (c->response != NULL) {
        ssize_t n = send(c->fd, c->response + c->sent, c->len - c->sent, MSG_NOSIGNAL);
        if (n > 0)
            c->sent += (size_t)n;
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || c->sent == c->len)
            conn_close(c);
        return;
    }
    ssize_t n = recv(c->fd, c->request + c->got, REQUEST_MAX - c->got, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        conn_close(c);
        return;
    }
    c->got += (size_t)n;
    c->request[c->got] = '\0';
    if (strstr(c->request, "\r\n\r\n") != NULL || strstr(c->request, "\n\n") != NULL)
        conn_answer(c);
    else if (c->got == REQUEST_MAX)
        conn_respond(c, "431 Request Header Fields Too Large", "text/plain; charset=utf-8",
                     "request too large\n", 18);
}

static void on_conn_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop, (void)revents;
    conn_close(w->data);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    exporter *ex = w->data;
    int fd = accept(ex->listen_fd, NULL, NULL);
    if (fd < 0)
        return;
    int slot = -1;
    for (int i = 0; i < CONNECTIONS_MAX && slot < 0; i++)
        if (ex->conns[i] == NULL)
            slot = i;
    conn *c = slot >= 0 ? calloc(1, sizeof(*c)) : NULL;
    if (c == NULL || fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
        free(c);
        close(fd); /* too many at once: the scraper retries */
        return;
    }
    c->ex = ex;
    c->fd = fd;
    ex->conns[slot] = c;
    ev_io_init(&c->io, on_conn, fd, EV_READ);
    c->io.data = c;
    ev_timer_init(&c->timeout, on_conn_timeout, REQUEST_TIMEOUT, 0.0);
    c->timeout.data = c;
    ev_io_start(loop, &c->io);
    ev_timer_start(loop, &c->timeout);
}

static int listen_on(const char *address)
{
    char host[64];
    const char *colon = strrchr(address, ':');
    struct sockaddr_in sa = {.sin_family = AF_INET};
    char *end = NULL;
    long port = colon != NULL ? strtol(colon + 1, &end, 10) : -1;
    if (colon == NULL || (size_t)(colon - address) >= sizeof(host) || end == colon + 1 ||
        *end != '\0' || port < 1 || port > 65535)
        return -1;
    memcpy(host, address, (size_t)(colon - address));
    host[colon - address] = '\0';
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return -1;
    sa.sin_port = htons((uint16_t)port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 16) != 0 ||
        fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
        perror("stats_exporter: listen");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* A signal: stop serving, free the client (it releases the lock on the
 * loop), and let ev_run() return when it is done. */
static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)revents;
    exporter *ex = w->data;
    ev_io_stop(loop, &ex->accept_io);
    ev_signal_stop(loop, &ex->sigint);
    ev_signal_stop(loop, &ex->sigterm);
    ev_timer_stop(loop, &ex->retry);
    for (int i = 0; i < CONNECTIONS_MAX; i++)
        if (ex->conns[i] != NULL)
            conn_close(ex->conns[i]);
    redlock_client_free(ex->client);
    ex->client = NULL;
}

/* The config, the listening socket (not with --once) and the client; 0,
 * or 1 after saying what failed. */
static int open_all(exporter *ex, const char *path, const char *address)
{
    char err[256];
    if (path == NULL || redlock_config_load_file(&ex->cfg, path, err, sizeof(err)) != REDLOCK_OK) {
        fprintf(stderr, "stats_exporter: %s\n", path == NULL ? "no config" : err);
        return 1;
    }
    if (!ex->once && (ex->listen_fd = listen_on(address)) < 0) {
        fprintf(stderr, "stats_exporter: cannot listen on %s (ADDRESS:PORT, IPv4)\n", address);
        return 1;
    }
    int rc = redlock_client_new(&ex->client, ex->cfg, ex->loop);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "stats_exporter: client: %s\n", redlock_strerror(rc));
        return 1;
    }
    return 0;
}

/* Accept connections, and stop on SIGINT or SIGTERM. */
static void serve(exporter *ex, const char *address)
{
    ev_io_init(&ex->accept_io, on_accept, ex->listen_fd, EV_READ);
    ex->accept_io.data = ex;
    ev_io_start(ex->loop, &ex->accept_io);
    ev_signal_init(&ex->sigint, on_signal, SIGINT);
    ev_signal_init(&ex->sigterm, on_signal, SIGTERM);
    ex->sigint.data = ex->sigterm.data = ex;
    ev_signal_start(ex->loop, &ex->sigint);
    ev_signal_start(ex->loop, &ex->sigterm);
    fprintf(stderr, "stats_exporter: serving http://%s/metrics\n", address);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CONFIG ADDRESS:PORT | %s CONFIG --once\n", argv[0], argv[0]);
        return 1;
    }
    const char *path = strcmp(argv[1], "-") == 0 ? getenv("REDLOCK_CONFIG") : argv[1];
    static exporter ex;
    ex.loop = ev_default_loop(0);
    ex.listen_fd = -1;
    ex.once = strcmp(argv[2], "--once") == 0;
    ex.status = open_all(&ex, path, argv[2]);
    if (ex.status == 0) {
        ev_timer_init(&ex.retry, on_retry, 1.0, 0.0);
        ex.retry.data = &ex;
        if (!ex.once)
            serve(&ex, argv[2]);
        take_lock(&ex);
        ev_run(ex.loop, 0);
    }
    if (ex.client != NULL) { /* --once done, or a failure: it closes on the loop */
        redlock_client_free(ex.client);
        ev_run(ex.loop, 0);
    }
    redlock_lock_free(ex.lock); /* released by the client's free, or NULL */
    if (ex.listen_fd >= 0)
        close(ex.listen_fd);
    redlock_config_free(ex.cfg);
    return ex.status;
}
