/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A recording TCP proxy on 127.0.0.1, one listening port per master, in a
 * thread of its own: it passes bytes both ways unchanged and notes each
 * command a client sends (RESP, as hiredis writes it) with its turn. A
 * client's turn ends when the master sends it anything; its next bytes
 * begin the next turn. Commands pipelined together share a turn, and a
 * command of turn t was sent after t replies had come back: t round trips
 * before it. The proxy sees the exact byte streams, so unlike timing gaps
 * this does not depend on how fast the machine is.
 */
#include "hold.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROXY_MAX_CONNS 32
#define PROXY_BUF_MAX (4 << 20)  /* a command longer than this is not parsed */
#define PROXY_POLL_MS 20
#define PROXY_CONNECT_MS 2000
#define PROXY_SHOWN_ARGS 6
#define PROXY_SHOWN_ARG_LEN 64   /* longer arguments show as their size */
#define PROXY_CUT_ARG_LEN 12     /* longer ones are cut short */

typedef struct proxy_conn {
    int client_fd, server_fd;    /* -1 once closed */
    unsigned master, id;
    unsigned turn;               /* the client's current turn */
    bool server_spoke;           /* the master sent something this turn */
    unsigned partial_turn;       /* the turn of the first unparsed byte */
    bool unparsable;
    char *buf;                   /* the client's bytes not parsed yet */
    size_t len, cap;
} proxy_conn;

struct hold_proxy {
    bench_masters ms;
    char resource[HOLD_PREFIX_SIZE + 8];
    int listen_fd[BENCH_MAX_MASTERS];
    int port[BENCH_MAX_MASTERS];
    proxy_conn conns[PROXY_MAX_CONNS];
    size_t nconns;
    proxy_command *cmds;
    size_t ncmds;
    pthread_t thread;
    atomic_bool stop;
};

/* ---- RESP ---------------------------------------------------------------- */

#define NUM_INCOMPLETE (-1)
#define NUM_BAD (-2)

/* A number ended by CRLF at buf[*at]: its value (*at moves past it),
 * NUM_INCOMPLETE or NUM_BAD. */
static long read_number(const char *buf, size_t len, size_t *at)
{
    long v = 0;
    size_t i = *at;
    for (; i < len && isdigit((unsigned char)buf[i]); i++) {
        if (v > (long)PROXY_BUF_MAX)
            return NUM_BAD;
        v = v * 10 + (buf[i] - '0');
    }
    if (i == len || (i + 1 == len && buf[i] == '\r'))
        return NUM_INCOMPLETE;
    if (i == *at || buf[i] != '\r' || buf[i + 1] != '\n')
        return NUM_BAD;
    *at = i + 2;
    return v;
}

/* One argument, as a command is shown: the resource watched as RESOURCE,
 * a long one cut short or by its size, a password never. */
static void show_arg(char *text, size_t size, const char *arg, size_t len, bool secret,
                     bool resource)
{
    size_t used = strlen(text);
    if (used + 1 >= size)
        return;
    char *w = text + used;
    size_t room = size - used;
    if (secret) {
        snprintf(w, room, " ***");
    } else if (resource) {
        snprintf(w, room, " RESOURCE");
    } else if (len > PROXY_SHOWN_ARG_LEN) {
        snprintf(w, room, " <%zu bytes>", len);
    } else {
        char shown[PROXY_SHOWN_ARG_LEN + 1];
        size_t n = len > PROXY_CUT_ARG_LEN ? PROXY_CUT_ARG_LEN - 2 : len;
        for (size_t i = 0; i < n; i++)
            shown[i] = isprint((unsigned char)arg[i]) ? arg[i] : '.';
        shown[n] = '\0';
        snprintf(w, room, " %s%s", shown, n < len ? ".." : "");
    }
}

/* The command's name, upper case, into text. */
static void show_name(char *text, size_t size, const char *arg, size_t len)
{
    size_t k = 0;
    for (; k < len && k + 1 < size && k < 24; k++)
        text[k] = (char)toupper((unsigned char)arg[k]);
    text[k] = '\0';
}

/* The first command in buf: its length, 0 when incomplete, -1 when buf
 * does not hold RESP (hiredis writes every command as an array of bulk
 * strings). Its shown form goes to cmd->text; whether an argument is
 * resource to cmd->names_resource. */
static long parse_command(const char *buf, size_t len, const char *resource, proxy_command *cmd)
{
    char *text = cmd->text;
    size_t size = sizeof(cmd->text);
    size_t resource_len = strlen(resource);
    if (len == 0)
        return 0;
    if (buf[0] != '*')
        return -1;
    size_t at = 1;
    long argc = read_number(buf, len, &at);
    if (argc == NUM_INCOMPLETE)
        return 0;
    if (argc <= 0)
        return -1;
    text[0] = '\0';
    bool auth = false;
    for (long a = 0; a < argc; a++) {
        if (at >= len)
            return 0;
        if (buf[at++] != '$')
            return -1;
        long n = read_number(buf, len, &at);
        if (n < 0)
            return n == NUM_INCOMPLETE ? 0 : -1;
        if (at + (size_t)n + 2 > len)
            return 0;
        bool is_resource =
            a > 0 && (size_t)n == resource_len && memcmp(buf + at, resource, resource_len) == 0;
        cmd->names_resource |= is_resource;
        if (a == 0) {
            show_name(text, size, buf + at, (size_t)n);
            auth = strcmp(text, "AUTH") == 0;
        } else if (a < PROXY_SHOWN_ARGS) {
            show_arg(text, size, buf + at, (size_t)n, auth, is_resource);
        }
        at += (size_t)n + 2;
    }
    return (long)at;
}

/* ---- Connections ----------------------------------------------------------- */

static void record(hold_proxy *p, const proxy_conn *c, const proxy_command *cmd)
{
    if (p->ncmds == HOLD_RTT_MAX_COMMANDS)
        return;
    proxy_command *r = &p->cmds[p->ncmds++];
    *r = *cmd;
    r->master = c->master;
    r->conn = c->id;
    r->turn = c->partial_turn;
}

/* The client's bytes: note the commands completed. */
static void client_bytes(hold_proxy *p, proxy_conn *c, const char *data, size_t n)
{
    if (c->unparsable)
        return;
    if (c->len + n > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n)
            cap *= 2;
        char *buf = cap <= PROXY_BUF_MAX ? realloc(c->buf, cap) : NULL;
        if (buf == NULL) {
            c->unparsable = true;
            return;
        }
        c->buf = buf;
        c->cap = cap;
    }
    if (c->len == 0)
        c->partial_turn = c->turn;
    memcpy(c->buf + c->len, data, n);
    c->len += n;
    size_t at = 0;
    for (;;) {
        proxy_command cmd = {0};
        long used = parse_command(c->buf + at, c->len - at, p->resource, &cmd);
        if (used < 0)
            c->unparsable = true;
        if (used <= 0)
            break;
        record(p, c, &cmd);
        at += (size_t)used;
        c->partial_turn = c->turn; /* the next command began in these bytes */
    }
    memmove(c->buf, c->buf + at, c->len - at);
    c->len -= at;
}

static bool send_all(int fd, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        data += w;
        n -= (size_t)w;
    }
    return true;
}

static void conn_close(proxy_conn *c)
{
    if (c->client_fd >= 0)
        close(c->client_fd);
    if (c->server_fd >= 0)
        close(c->server_fd);
    c->client_fd = c->server_fd = -1;
}

/* Bytes from one side of c to the other; false when c is done. */
static bool conn_pass(hold_proxy *p, proxy_conn *c, bool from_client)
{
    char data[65536];
    int from = from_client ? c->client_fd : c->server_fd;
    int to = from_client ? c->server_fd : c->client_fd;
    ssize_t n = recv(from, data, sizeof(data), 0);
    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0 || !send_all(to, data, (size_t)n))
        return false;
    if (from_client) {
        if (c->server_spoke) {
            c->turn++;
            c->server_spoke = false;
        }
        client_bytes(p, c, data, (size_t)n);
    } else {
        c->server_spoke = true;
    }
    return true;
}

/* A connected socket to master i, the connect bounded in time; -1 on failure. */
static int connect_master(const bench_masters *ms, size_t i)
{
    char port[16];
    snprintf(port, sizeof(port), "%d", ms->port[i]);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    if (getaddrinfo(ms->host[i], port, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            int err = 0;
            socklen_t errlen = sizeof(err);
            rc = poll(&pfd, 1, PROXY_CONNECT_MS) == 1 &&
                         getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) == 0 && err == 0
                     ? 0
                     : -1;
        }
        if (rc != 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

static void accept_client(hold_proxy *p, size_t master)
{
    int fd = accept4(p->listen_fd[master], NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    int server = p->nconns < PROXY_MAX_CONNS ? connect_master(&p->ms, master) : -1;
    if (server < 0) {
        close(fd);
        return;
    }
    proxy_conn *c = &p->conns[p->nconns];
    *c = (proxy_conn){.client_fd = fd, .server_fd = server, .master = (unsigned)master,
                      .id = (unsigned)p->nconns};
    p->nconns++;
}

/* ---- The thread --------------------------------------------------------- */

static void *proxy_main(void *arg)
{
    hold_proxy *p = arg;
    struct pollfd fds[BENCH_MAX_MASTERS + 2 * PROXY_MAX_CONNS];
    size_t owner[BENCH_MAX_MASTERS + 2 * PROXY_MAX_CONNS]; /* conn index * 2 + from server */
    while (!atomic_load(&p->stop)) {
        size_t nfds = 0;
        for (size_t i = 0; i < p->ms.n; i++)
            fds[nfds++] = (struct pollfd){.fd = p->listen_fd[i], .events = POLLIN};
        for (size_t c = 0; c < p->nconns; c++) {
            if (p->conns[c].client_fd < 0)
                continue;
            owner[nfds] = c * 2;
            fds[nfds++] = (struct pollfd){.fd = p->conns[c].client_fd, .events = POLLIN};
            owner[nfds] = c * 2 + 1;
            fds[nfds++] = (struct pollfd){.fd = p->conns[c].server_fd, .events = POLLIN};
        }
        if (poll(fds, nfds, PROXY_POLL_MS) <= 0)
            continue;
        for (size_t k = p->ms.n; k < nfds; k++) {
            proxy_conn *c = &p->conns[owner[k] / 2];
            if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0 || c->client_fd < 0)
                continue;
            if (!conn_pass(p, c, owner[k] % 2 == 0))
                conn_close(c);
        }
        for (size_t i = 0; i < p->ms.n; i++)
            if (fds[i].revents & POLLIN)
                accept_client(p, i);
    }
    return NULL;
}

static int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

hold_proxy *hold_proxy_start(const bench_masters *ms, const char *resource)
{
    hold_proxy *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->ms = *ms;
    snprintf(p->resource, sizeof(p->resource), "%s", resource);
    atomic_init(&p->stop, false);
    p->cmds = calloc(HOLD_RTT_MAX_COMMANDS, sizeof(*p->cmds));
    bool ok = p->cmds != NULL;
    for (size_t i = 0; i < ms->n; i++)
        p->listen_fd[i] = -1;
    for (size_t i = 0; i < ms->n && ok; i++)
        ok = (p->listen_fd[i] = listen_loopback(&p->port[i])) >= 0;
    if (ok && pthread_create(&p->thread, NULL, proxy_main, p) == 0)
        return p;
    for (size_t i = 0; i < ms->n; i++)
        if (p->listen_fd[i] >= 0)
            close(p->listen_fd[i]);
    free(p->cmds);
    free(p);
    return NULL;
}

int hold_proxy_port(const hold_proxy *p, size_t i)
{
    return i < p->ms.n ? p->port[i] : -1;
}

size_t hold_proxy_stop(hold_proxy *p, proxy_command **out)
{
    atomic_store(&p->stop, true);
    pthread_join(p->thread, NULL);
    for (size_t c = 0; c < p->nconns; c++) {
        conn_close(&p->conns[c]);
        free(p->conns[c].buf);
    }
    for (size_t i = 0; i < p->ms.n; i++)
        close(p->listen_fd[i]);
    size_t n = p->ncmds;
    *out = p->cmds;
    free(p);
    return n;
}
