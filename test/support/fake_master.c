/* SPDX-License-Identifier: BSD-3-Clause */
/* A scripted fake master for tests; see fake_master.h. */
#include "fake_master.h"

#include "reply.h"   /* the handshake's scripts: SCRIPT LOAD answers their SHA1 */
#include "scripts.h"
#include "testclock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CLIENTS 16  /* connections served at once; more are closed */
#define POLL_MS 200     /* the longest the thread sleeps between checks */
#define GARBAGE_LEN 256 /* bytes per garbage write */

typedef struct fake_client {
    int fd;              /* -1: free */
    redisReader *reader; /* requests, parsed as RESP */
    bool muted;           /* a request left unanswered: nothing after it is */
} fake_client;

struct fake_master {
    fake_master_mode mode;
    char *error_reply;   /* "-<text>\r\n", or NULL */
    char run_id[41];     /* INFO's run_id: 40 hex digits of our own */
    int listen_fd;
    int port;
    int wake[2];         /* a byte on wake[1] wakes the thread: stopping or paused changed */
    atomic_bool stopping;
    atomic_bool paused;
    atomic_uint wakes;   /* wake-ups asked for... */
    atomic_uint woken;   /* ...and the last one the thread started a turn after */
    pthread_t thread;
    fake_client clients[MAX_CLIENTS];
    atomic_uint connections;
    atomic_uint commands;
    atomic_uint requests; /* commands outside the handshake */
};

/* Best effort, never blocking, never raising SIGPIPE. */
static void send_bytes(int fd, const void *buf, size_t len)
{
    (void)!send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void send_text(int fd, const char *text)
{
    send_bytes(fd, text, strlen(text));
}

/* Bytes that are no RESP: FAKE_MASTER_GARBAGE_BYTE, then a fixed
 * pseudo-random sequence (the same every time, so messages are too). */
static void send_garbage(int fd)
{
    unsigned char buf[GARBAGE_LEN];
    uint32_t x = 2463534242U;
    buf[0] = FAKE_MASTER_GARBAGE_BYTE;
    for (size_t i = 1; i < sizeof(buf); i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (unsigned char)x;
    }
    send_bytes(fd, buf, sizeof(buf));
}

static void send_bulk(int fd, const char *s, size_t len)
{
    char header[32];
    snprintf(header, sizeof(header), "$%zu\r\n", len);
    send_text(fd, header);
    send_bytes(fd, s, len);
    send_text(fd, "\r\n");
}

static bool arg_is(const redisReply *cmd, size_t i, const char *word)
{
    return cmd->elements > i && cmd->element[i]->type == REDIS_REPLY_STRING &&
           strlen(word) == cmd->element[i]->len &&
           strncasecmp(cmd->element[i]->str, word, cmd->element[i]->len) == 0;
}

/* A command on the client's clock probe (its key redlock:clock:...). */
static bool is_probe(const redisReply *cmd)
{
    static const char prefix[] = "redlock:clock:";
    return cmd->elements > 1 && cmd->element[1]->type == REDIS_REPLY_STRING &&
           cmd->element[1]->len > sizeof(prefix) - 1 &&
           memcmp(cmd->element[1]->str, prefix, sizeof(prefix) - 1) == 0;
}

/* The commands of the library's connection handshake, and of its clock
 * probe, which are answered as Redis would whatever the mode (but in
 * order: never past a request the mode leaves unanswered). */
static bool is_handshake(const redisReply *cmd)
{
    return arg_is(cmd, 0, "AUTH") || arg_is(cmd, 0, "SELECT") ||
           (arg_is(cmd, 0, "SCRIPT") && arg_is(cmd, 1, "LOAD")) || arg_is(cmd, 0, "INFO") ||
           (arg_is(cmd, 0, "CONFIG") && arg_is(cmd, 1, "GET")) || is_probe(cmd);
}

/* Answer a handshake command as Redis would. */
static void answer_handshake(const fake_master *fm, int fd, const redisReply *cmd)
{
    if (arg_is(cmd, 0, "INFO")) {
        char info[128];
        int len = snprintf(info, sizeof(info), "# Server\r\nredis_version:0.0.0-fake\r\nrun_id:%s\r\n",
                           fm->run_id);
        send_bulk(fd, info, (size_t)len);
        return;
    }
    if (arg_is(cmd, 0, "SCRIPT")) {
        const redisReply *source = cmd->elements > 2 ? cmd->element[2] : NULL;
        for (int step = RL_HS_FIRST_LOAD; source != NULL && step <= RL_HS_LAST_LOAD; step++) {
            const rl_script *known = rl_handshake_script((rl_handshake_step)step);
            if (source->len == strlen(known->source) &&
                memcmp(source->str, known->source, source->len) == 0) {
                send_bulk(fd, known->sha, 40);
                return;
            }
        }
        send_text(fd, "-ERR this fake knows only the library's scripts\r\n");
        return;
    }
    if (arg_is(cmd, 0, "CONFIG")) { /* the durable check: a fake has no AOF settings */
        send_text(fd, "*0\r\n");
        return;
    }
    if (arg_is(cmd, 0, "PTTL")) { /* the probe, set at PX 10000 a moment ago */
        send_text(fd, ":9999\r\n");
        return;
    }
    if (arg_is(cmd, 0, "DEL")) {
        send_text(fd, ":1\r\n");
        return;
    }
    send_text(fd, "+OK\r\n"); /* AUTH, SELECT, the probe's SET */
}

static void close_client(fake_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    if (c->reader != NULL)
        redisReaderFree(c->reader);
    c->fd = -1;
    c->reader = NULL;
}

/* One request. Returns false when the connection is to be closed. */
static bool answer(fake_master *fm, fake_client *c, const redisReply *cmd)
{
    atomic_fetch_add(&fm->commands, 1);
    if (cmd->type != REDIS_REPLY_ARRAY || cmd->elements == 0)
        return false; /* not a request as clients send them */
    if (!is_handshake(cmd))
        atomic_fetch_add(&fm->requests, 1);
    else if (c->muted)
        return true; /* replies go in order: none past one left out */
    switch (fm->mode) {
    case FAKE_MASTER_ERROR:
        send_text(c->fd, fm->error_reply);
        return true;
    case FAKE_MASTER_ERROR_AFTER_HANDSHAKE:
        if (is_handshake(cmd))
            answer_handshake(fm, c->fd, cmd);
        else
            send_text(c->fd, fm->error_reply);
        return true;
    case FAKE_MASTER_HALF_REPLY:
        if (is_handshake(cmd)) {
            answer_handshake(fm, c->fd, cmd);
            return true;
        }
        send_text(c->fd, "$10\r\nhalf");
        return false;
    case FAKE_MASTER_HUGE_ARRAY:
        if (is_handshake(cmd)) {
            answer_handshake(fm, c->fd, cmd);
        } else {
            send_text(c->fd, "*" FAKE_MASTER_HUGE_ELEMENTS "\r\n");
            c->muted = true;
        }
        return true;
    case FAKE_MASTER_SILENT_AFTER_HANDSHAKE:
        if (is_handshake(cmd))
            answer_handshake(fm, c->fd, cmd);
        else
            c->muted = true;
        return true;
    default:
        return true;
    }
}

/* Data arrived on a connection (or it closed). */
static void serve_client(fake_master *fm, fake_client *c)
{
    char buf[16384];
    ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        close_client(c);
        return;
    }
    if (n < 0)
        return;
    if (fm->mode == FAKE_MASTER_SILENT)
        return;
    if (fm->mode == FAKE_MASTER_GARBAGE) {
        send_garbage(c->fd);
        return;
    }
    if (redisReaderFeed(c->reader, buf, (size_t)n) != REDIS_OK) {
        close_client(c);
        return;
    }
    for (;;) {
        void *reply = NULL;
        if (redisReaderGetReply(c->reader, &reply) != REDIS_OK) {
            close_client(c); /* not RESP: hang up, as Redis does */
            return;
        }
        if (reply == NULL)
            return; /* the rest of the request has not arrived yet */
        bool keep = answer(fm, c, reply);
        freeReplyObject(reply);
        if (!keep) {
            close_client(c);
            return;
        }
    }
}

static void accept_client(fake_master *fm)
{
    int fd = accept4(fm->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    atomic_fetch_add(&fm->connections, 1);
    fake_client *c = NULL;
    for (size_t i = 0; i < MAX_CLIENTS && c == NULL; i++)
        if (fm->clients[i].fd < 0)
            c = &fm->clients[i];
    if (c == NULL || (c->reader = redisReaderCreate()) == NULL) {
        close(fd);
        return;
    }
    c->fd = fd;
    c->muted = false;
    if (fm->mode == FAKE_MASTER_GARBAGE)
        send_garbage(fd); /* at once, as a server with a banner would */
}

/* Read the wake-up bytes; whether to stop. */
static bool woken_to_stop(fake_master *fm)
{
    char buf[64];
    while (read(fm->wake[0], buf, sizeof(buf)) > 0)
        ;
    return atomic_load(&fm->stopping);
}

static void wake(fake_master *fm)
{
    (void)!write(fm->wake[1], "x", 1);
}

/* Wake the thread and wait (a second at most) until it has begun a new
 * turn, which sees every change made before. */
static void wake_and_wait(fake_master *fm)
{
    unsigned ticket = atomic_fetch_add(&fm->wakes, 1) + 1;
    wake(fm);
    for (int i = 0; i < 1000 && atomic_load(&fm->woken) < ticket; i++)
        tc_sleep_ms(1);
}

static void *serve(void *arg)
{
    fake_master *fm = arg;
    int64_t end = tc_now_us() / 1000 + FAKE_MASTER_LIFETIME_MS;
    for (int64_t now = tc_now_us() / 1000; now < end; now = tc_now_us() / 1000) {
        atomic_store(&fm->woken, atomic_load(&fm->wakes));
        struct pollfd pfd[2 + MAX_CLIENTS];
        fake_client *polled[2 + MAX_CLIENTS];
        nfds_t n = 0;
        pfd[n++] = (struct pollfd){fm->wake[0], POLLIN, 0};
        pfd[n++] = (struct pollfd){fm->listen_fd, atomic_load(&fm->paused) ? 0 : POLLIN, 0};
        for (size_t i = 0; i < MAX_CLIENTS && !atomic_load(&fm->paused); i++) {
            if (fm->clients[i].fd >= 0) {
                polled[n] = &fm->clients[i];
                pfd[n++] = (struct pollfd){fm->clients[i].fd, POLLIN, 0};
            }
        }
        int64_t left = end - now;
        if (poll(pfd, n, left < POLL_MS ? (int)left : POLL_MS) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents != 0 && woken_to_stop(fm))
            break;
        if (atomic_load(&fm->paused))
            continue; /* paused while polling: serve nothing more */
        if (pfd[1].revents & POLLIN)
            accept_client(fm);
        for (nfds_t i = 2; i < n; i++)
            if (pfd[i].revents != 0)
                serve_client(fm, polled[i]);
    }
    for (size_t i = 0; i < MAX_CLIENTS; i++)
        close_client(&fm->clients[i]);
    return NULL;
}

/* Listen on 127.0.0.1 on a port the kernel picks. */
static int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(addr.sin_port);
    return fd;
}

fake_master *fake_master_start(fake_master_mode mode, const char *error_reply)
{
    static atomic_uint serial;
    fake_master *fm = calloc(1, sizeof(*fm));
    if (fm == NULL)
        return NULL;
    fm->mode = mode;
    fm->listen_fd = fm->wake[0] = fm->wake[1] = -1;
    for (size_t i = 0; i < MAX_CLIENTS; i++)
        fm->clients[i].fd = -1;
    if (error_reply != NULL && asprintf(&fm->error_reply, "-%s\r\n", error_reply) < 0)
        fm->error_reply = NULL;
    if ((mode == FAKE_MASTER_ERROR || mode == FAKE_MASTER_ERROR_AFTER_HANDSHAKE) &&
        fm->error_reply == NULL) {
        fprintf(stderr, "fake_master: this mode needs an error reply\n");
        free(fm);
        return NULL;
    }
    fm->listen_fd = listen_loopback(&fm->port);
    if (fm->listen_fd < 0 || pipe2(fm->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "fake_master: cannot listen on 127.0.0.1: %s\n", strerror(errno));
        fake_master_stop(fm);
        return NULL;
    }
    /* Never a run_id a real server could have: ours start with "fa4e". */
    snprintf(fm->run_id, sizeof(fm->run_id), "fa4e%031u%05d", atomic_fetch_add(&serial, 1) % 1000U,
             fm->port);

    /* Signals are for the test's own threads. */
    sigset_t all;
    sigset_t old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&fm->thread, NULL, serve, fm);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fprintf(stderr, "fake_master: cannot start its thread: %s\n", strerror(rc));
        close(fm->wake[0]);
        close(fm->wake[1]);
        fm->wake[0] = fm->wake[1] = -1;
        fake_master_stop(fm);
        return NULL;
    }
    return fm;
}

int fake_master_port(const fake_master *fm)
{
    return fm->port;
}

unsigned fake_master_connections(const fake_master *fm)
{
    return atomic_load(&fm->connections);
}

unsigned fake_master_commands(const fake_master *fm)
{
    return atomic_load(&fm->commands);
}

unsigned fake_master_requests(const fake_master *fm)
{
    return atomic_load(&fm->requests);
}

void fake_master_pause(fake_master *fm)
{
    atomic_store(&fm->paused, true);
    wake_and_wait(fm);
}

void fake_master_resume(fake_master *fm)
{
    atomic_store(&fm->paused, false);
    wake_and_wait(fm);
}

void fake_master_stop(fake_master *fm)
{
    if (fm == NULL)
        return;
    if (fm->wake[1] >= 0) {
        atomic_store(&fm->stopping, true);
        wake(fm);
        pthread_join(fm->thread, NULL);
    }
    if (fm->wake[0] >= 0)
        close(fm->wake[0]);
    if (fm->wake[1] >= 0)
        close(fm->wake[1]);
    if (fm->listen_fd >= 0)
        close(fm->listen_fd);
    free(fm->error_reply);
    free(fm);
}
