/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fleet fixture itself: servers start, answer, fail for real when
 * faulted, and leave nothing behind.
 */
#include "fleet.h"
#include "testclock.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static fleet *fl;

static void stop_fleet(void)
{
    fleet_stop(fl);
    fl = NULL;
}

/* 1 when a plain TCP connect to 127.0.0.1:port is refused. */
static int tcp_refused(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((uint16_t)port);
    int refused = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 &&
                  errno == ECONNREFUSED;
    close(fd);
    return refused;
}

/* 1 when pid no longer exists (exited and reaped). */
static int process_gone(pid_t pid)
{
    errno = 0;
    return kill(pid, 0) == -1 && errno == ESRCH;
}

static int path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path);
}

static void expect_ping(size_t i, int expected)
{
    cr_expect_eq(fleet_ping(fl, i, 1000), expected, "server %zu", i);
}

Test(fleet, starts_five_servers_that_answer_ping, .fini = stop_fleet, .timeout = 60)
{
    double start = tc_now_ms();
    fl = fleet_start(5, NULL);
    double took = tc_now_ms() - start;
    cr_assert_not_null(fl);
    cr_log_info("fleet_start(5) took %.0f ms", took);
    cr_expect_lt(took, 2000, "starting 5 servers took %.0f ms", took);
    cr_assert_eq(fleet_size(fl), 5);
    for (size_t i = 0; i < 5; i++) {
        cr_assert_gt(fleet_port(fl, i), 0);
        cr_assert_gt(fleet_pid(fl, i), 0);
        for (size_t j = 0; j < i; j++)
            cr_assert_neq(fleet_port(fl, i), fleet_port(fl, j));
        expect_ping(i, FLEET_PING_OK);
        redisContext *c = fleet_connect(fl, i);
        cr_assert_not_null(c);
        redisReply *r = redisCommand(c, "PING");
        cr_assert_not_null(r);
        cr_expect_eq(r->type, REDIS_REPLY_STATUS);
        cr_expect_str_eq(r->str, "PONG");
        freeReplyObject(r);
        redisFree(c);
    }
    cr_expect_eq(fleet_port(fl, 5), -1);
    cr_expect_eq(fleet_pid(fl, 5), 0);
}

Test(fleet, kill_refuses_connections_and_restart_reuses_the_port, .fini = stop_fleet,
     .timeout = 60)
{
    fl = fleet_start(5, NULL);
    cr_assert_not_null(fl);
    int port = fleet_port(fl, 2);
    pid_t old_pid = fleet_pid(fl, 2);
    /* A connection open across the kill: the restart must not trip on it. */
    redisContext *held = fleet_connect(fl, 2);
    cr_assert_not_null(held);

    cr_assert_eq(fleet_kill(fl, 2), 0);
    cr_expect_eq(fleet_pid(fl, 2), 0);
    cr_expect(process_gone(old_pid));
    cr_expect_eq(fleet_ping(fl, 2, 200), FLEET_PING_REFUSED);
    cr_expect(tcp_refused(port));
    cr_expect_null(fleet_connect(fl, 2));
    cr_expect_eq(fleet_kill(fl, 2), -1, "killing a dead server is an error");
    for (size_t i = 0; i < 5; i++)
        expect_ping(i, i == 2 ? FLEET_PING_REFUSED : FLEET_PING_OK);

    cr_assert_eq(fleet_restart(fl, 2), 0);
    cr_expect_eq(fleet_port(fl, 2), port);
    cr_expect_gt(fleet_pid(fl, 2), 0);
    cr_expect_neq(fleet_pid(fl, 2), old_pid);
    expect_ping(2, FLEET_PING_OK);
    redisFree(held);

    /* Restarting a running server kills it first. */
    pid_t running = fleet_pid(fl, 2);
    cr_assert_eq(fleet_restart(fl, 2), 0);
    cr_expect(process_gone(running));
    expect_ping(2, FLEET_PING_OK);
}

Test(fleet, pause_times_out_and_resume_answers, .fini = stop_fleet, .timeout = 60)
{
    fl = fleet_start(3, NULL);
    cr_assert_not_null(fl);
    cr_assert_eq(fleet_pause(fl, 1), 0);
    cr_expect_eq(fleet_is_paused(fl, 1), 1);
    cr_expect_eq(fleet_pause(fl, 1), 0, "pausing twice is fine");

    double start = tc_now_ms();
    int result = fleet_ping(fl, 1, 200);
    double took = tc_now_ms() - start;
    cr_expect_eq(result, FLEET_PING_TIMEOUT);
    cr_expect(took >= 190 && took < 1500, "PING gave up after %.0f ms", took);
    expect_ping(0, FLEET_PING_OK);
    expect_ping(2, FLEET_PING_OK);
    cr_expect_eq(fleet_count_value(fl, "k", 1, "v", 1), 0, "skips the paused server quickly");

    cr_assert_eq(fleet_resume(fl, 1), 0);
    cr_expect_eq(fleet_is_paused(fl, 1), 0);
    expect_ping(1, FLEET_PING_OK);
    cr_expect_eq(fleet_resume(fl, 1), 0, "resuming a running server is fine");
}

Test(fleet, restart_and_kill_work_on_a_paused_server, .fini = stop_fleet, .timeout = 60)
{
    fl = fleet_start(2, NULL);
    cr_assert_not_null(fl);
    pid_t paused = fleet_pid(fl, 0);
    cr_assert_eq(fleet_pause(fl, 0), 0);
    cr_assert_eq(fleet_restart(fl, 0), 0);
    cr_expect(process_gone(paused));
    cr_expect_eq(fleet_is_paused(fl, 0), 0);
    expect_ping(0, FLEET_PING_OK);

    paused = fleet_pid(fl, 1);
    cr_assert_eq(fleet_pause(fl, 1), 0);
    cr_assert_eq(fleet_kill(fl, 1), 0);
    cr_expect(process_gone(paused));
    cr_expect_eq(fleet_ping(fl, 1, 200), FLEET_PING_REFUSED);
    cr_expect_eq(fleet_pause(fl, 1), -1, "a dead server cannot be paused");
}

Test(fleet, stop_kills_every_server_and_removes_the_directory, .timeout = 60)
{
    fleet *f = fleet_start(4, NULL);
    cr_assert_not_null(f);
    cr_assert_eq(fleet_pause(f, 3), 0, "a stopped process must be killed too");
    pid_t pids[4];
    int ports[4];
    for (size_t i = 0; i < 4; i++) {
        pids[i] = fleet_pid(f, i);
        ports[i] = fleet_port(f, i);
    }
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", fleet_dir(f));
    cr_assert(path_exists(dir));

    fleet_stop(f);
    for (size_t i = 0; i < 4; i++) {
        cr_expect(process_gone(pids[i]), "server %zu still exists", i);
        cr_expect(tcp_refused(ports[i]));
    }
    cr_expect_not(path_exists(dir), "%s still exists", dir);
    fleet_stop(NULL);
}

Test(fleet, requirepass_refuses_unauthenticated_commands, .fini = stop_fleet, .timeout = 60)
{
    /* Quotes, spaces and a backslash must survive the config file. */
    static const char password[] = "s3cret \"pass\" \\word";
    fleet_options opts = {.requirepass = password};
    fl = fleet_start(3, &opts);
    cr_assert_not_null(fl);

    redisContext *c = redisConnectWithTimeout("127.0.0.1", fleet_port(fl, 0),
                                              (struct timeval){1, 0});
    cr_assert(c != NULL && c->err == 0);
    redisReply *r = redisCommand(c, "SET %s %s", "k", "v");
    cr_assert_not_null(r);
    cr_expect_eq(r->type, REDIS_REPLY_ERROR);
    cr_expect(strncmp(r->str, "NOAUTH", 6) == 0, "got %s", r->str);
    freeReplyObject(r);
    r = redisCommand(c, "AUTH %s", "wrong");
    cr_assert_not_null(r);
    cr_expect_eq(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
    r = redisCommand(c, "AUTH %s", password);
    cr_assert_not_null(r);
    cr_expect_eq(r->type, REDIS_REPLY_STATUS, "the password got through: %s", r->str);
    freeReplyObject(r);
    redisFree(c);

    for (size_t i = 0; i < 3; i++) {
        expect_ping(i, FLEET_PING_OK);
        cr_expect_eq(fleet_set(fl, i, "k", 1, "v", 1, 0), 0);
    }
    cr_expect_eq(fleet_count_value(fl, "k", 1, "v", 1), 3);

    /* The password is not on any command line. */
    char path[64];
    char cmdline[4096];
    snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)fleet_pid(fl, 0));
    FILE *fp = fopen(path, "r");
    cr_assert_not_null(fp);
    size_t len = fread(cmdline, 1, sizeof(cmdline) - 1, fp);
    fclose(fp);
    cr_expect_null(memmem(cmdline, len, "s3cret", 6));

    /* A replica authenticates to its master. */
    cr_assert_eq(fleet_start_replica(fl, 2, 0), 0);
    double deadline = tc_now_ms() + 3000;
    while (fleet_count_value(fl, "k", 1, "v", 1) < 3 && tc_now_ms() < deadline)
        tc_sleep_ms(20);
    r = fleet_command(fl, 2, "INFO replication");
    cr_assert_not_null(r);
    cr_expect_not_null(strstr(r->str, "master_link_status:up"), "%s", r->str);
    freeReplyObject(r);
}

Test(fleet, replica_rejects_writes_with_readonly, .fini = stop_fleet, .timeout = 60)
{
    fl = fleet_start(2, NULL);
    cr_assert_not_null(fl);
    cr_assert_eq(fleet_set(fl, 0, "k", 1, "v", 1, 0), 0);
    int port = fleet_port(fl, 1);
    cr_assert_eq(fleet_start_replica(fl, 1, 0), 0);
    cr_expect_eq(fleet_port(fl, 1), port);

    redisReply *r = fleet_command(fl, 1, "SET %s %s", "k2", "v");
    cr_assert_not_null(r);
    cr_expect_eq(r->type, REDIS_REPLY_ERROR);
    cr_expect(strncmp(r->str, "READONLY", 8) == 0, "got %s", r->str);
    freeReplyObject(r);
    r = fleet_command(fl, 1, "INFO replication");
    cr_assert_not_null(r);
    cr_expect_not_null(strstr(r->str, "role:slave"));
    freeReplyObject(r);

    /* It syncs from its master promptly. */
    double deadline = tc_now_ms() + 3000;
    while (fleet_count_value(fl, "k", 1, "v", 1) < 2 && tc_now_ms() < deadline)
        tc_sleep_ms(20);
    cr_expect_eq(fleet_count_value(fl, "k", 1, "v", 1), 2);

    /* A restart makes it a master again, empty without persistence. */
    cr_assert_eq(fleet_restart(fl, 1), 0);
    cr_expect_eq(fleet_get(fl, 1, "k", 1, NULL, 0, NULL), 0);
    cr_expect_eq(fleet_set(fl, 1, "k2", 2, "v", 1, 0), 0);
    cr_expect_eq(fleet_start_replica(fl, 1, 1), -1, "a server cannot replicate itself");
}

Test(fleet, appendonly_keeps_a_key_across_kill, .fini = stop_fleet, .timeout = 60)
{
    fleet_options opts = {.appendonly = 1};
    fl = fleet_start(1, &opts);
    cr_assert_not_null(fl);
    cr_assert_eq(fleet_set(fl, 0, "key", 3, "kept", 4, 0), 0);
    cr_assert_eq(fleet_kill(fl, 0), 0);
    cr_assert_eq(fleet_restart(fl, 0), 0);
    char buf[16];
    size_t len = 0;
    cr_assert_eq(fleet_get(fl, 0, "key", 3, buf, sizeof(buf), &len), 1);
    cr_expect_eq(len, 4);
    cr_expect(memcmp(buf, "kept", 4) == 0);
}

Test(fleet, without_persistence_a_killed_server_restarts_empty, .fini = stop_fleet,
     .timeout = 60)
{
    fl = fleet_start(1, NULL);
    cr_assert_not_null(fl);
    cr_assert_eq(fleet_set(fl, 0, "key", 3, "lost", 4, 0), 0);
    cr_assert_eq(fleet_get(fl, 0, "key", 3, NULL, 0, NULL), 1);
    cr_assert_eq(fleet_kill(fl, 0), 0);
    cr_assert_eq(fleet_restart(fl, 0), 0);
    cr_expect_eq(fleet_get(fl, 0, "key", 3, NULL, 0, NULL), 0);
}

Test(fleet, data_helpers_are_binary_safe, .fini = stop_fleet, .timeout = 60)
{
    static const char key[] = {'a', '\0', 'b', '\n', 'c'};
    static const char val[] = {'x', '\0', 'y'};
    fl = fleet_start(3, NULL);
    cr_assert_not_null(fl);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(fleet_set(fl, i, key, sizeof(key), val, sizeof(val), 10000), 0);

    char buf[8];
    size_t len = 0;
    cr_assert_eq(fleet_get(fl, 0, key, sizeof(key), buf, sizeof(buf), &len), 1);
    cr_expect_eq(len, sizeof(val));
    cr_expect(memcmp(buf, val, sizeof(val)) == 0);
    cr_assert_eq(fleet_get(fl, 0, key, sizeof(key), buf, 1, &len), 1, "truncated copy");
    cr_expect_eq(len, sizeof(val));
    cr_expect_eq(fleet_get(fl, 0, key, 4, buf, sizeof(buf), &len), 0, "a prefix is another key");

    long long ttl = fleet_pttl(fl, 0, key, sizeof(key));
    cr_expect(ttl > 9000 && ttl <= 10000, "pttl %lld", ttl);
    cr_expect_eq(fleet_count_value(fl, key, sizeof(key), val, sizeof(val)), 3);
    cr_expect_eq(fleet_count_value(fl, key, sizeof(key), "x\0z", 3), 0);
    cr_expect_eq(fleet_count_value(fl, key, sizeof(key), "x", 1), 0, "a prefix is not a match");

    cr_assert_eq(fleet_kill(fl, 0), 0);
    cr_expect_eq(fleet_count_value(fl, key, sizeof(key), val, sizeof(val)), 2);
    cr_expect_eq(fleet_get(fl, 0, key, sizeof(key), buf, sizeof(buf), &len), -1);
    cr_expect_eq(fleet_pttl(fl, 0, key, sizeof(key)), -3);
    cr_expect_eq(fleet_set(fl, 0, key, sizeof(key), val, sizeof(val), 0), -1);
    cr_expect_eq(fleet_del(fl, 0, key, sizeof(key)), -1);

    cr_assert_eq(fleet_del(fl, 2, key, sizeof(key)), 1);
    cr_expect_eq(fleet_del(fl, 2, key, sizeof(key)), 0);
    cr_expect_eq(fleet_pttl(fl, 2, key, sizeof(key)), -2);
    cr_assert_eq(fleet_set(fl, 2, key, sizeof(key), val, sizeof(val), 0), 0);
    cr_expect_eq(fleet_pttl(fl, 2, key, sizeof(key)), -1);
    cr_expect_eq(fleet_count_value(fl, key, sizeof(key), val, sizeof(val)), 2);

    redisReply *r = fleet_command(fl, 1, "ECHO %b", val, sizeof(val));
    cr_assert_not_null(r);
    cr_expect_eq(r->len, (long long)sizeof(val));
    freeReplyObject(r);
}

Test(fleet, extra_args_reach_every_server, .fini = stop_fleet, .timeout = 60)
{
    static const char *const extra[] = {"--maxmemory", "12mb", "--hz", "50", NULL};
    fleet_options opts = {.extra_args = extra};
    fl = fleet_start(2, &opts);
    cr_assert_not_null(fl);
    for (size_t i = 0; i < 2; i++) {
        redisReply *r = fleet_command(fl, i, "CONFIG GET maxmemory");
        cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
        cr_expect_str_eq(r->element[1]->str, "12582912");
        freeReplyObject(r);
    }
}

Test(fleet, config_lists_every_server, .fini = stop_fleet, .timeout = 60)
{
    fl = fleet_start(3, NULL);
    cr_assert_not_null(fl);
    cr_assert_eq(fleet_kill(fl, 1), 0, "a server that is down is listed all the same");
    redlock_config *cfg = fleet_config(fl);
    cr_assert_not_null(cfg);
    cr_expect_eq(redlock_config_node_count(cfg), 3);
    for (size_t i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof(name), "127.0.0.1:%d", fleet_port(fl, i));
        cr_expect_str_eq(redlock_config_node_name(cfg, i), name);
    }
    /* The two timeouts are stretched by the time scale (fleet.h). */
    const struct {
        redlock_setting key;
        int64_t value;
    } expected[] = {
        {REDLOCK_CONNECT_TIMEOUT_MS, fleet_scaled_ms(200)},
        {REDLOCK_COMMAND_TIMEOUT_MS, fleet_scaled_ms(100)},
        {REDLOCK_RECONNECT_MIN_MS, 20},
        {REDLOCK_RECONNECT_MAX_MS, 200},
        {REDLOCK_RETRY_DELAY_MS, 20},
        {REDLOCK_RETRY_JITTER_MS, 20},
    };
    for (size_t k = 0; k < sizeof(expected) / sizeof(expected[0]); k++) {
        int64_t value = -1;
        cr_expect_eq(redlock_config_get(cfg, expected[k].key, &value), REDLOCK_OK);
        cr_expect_eq(value, expected[k].value, "%s", redlock_setting_name(expected[k].key));
    }
    redlock_config_free(cfg);
}

Test(fleet, a_server_that_cannot_start_fails_fast, .timeout = 60)
{
    static const char *const extra[] = {"--no-such-option", "1", NULL};
    fleet_options opts = {.extra_args = extra};
    double start = tc_now_ms();
    cr_expect_null(fleet_start(3, &opts));
    cr_expect_lt(tc_now_ms() - start, 3000);
    int status;
    errno = 0;
    cr_expect_eq(waitpid(-1, &status, WNOHANG), -1, "a child is left");
    cr_expect_eq(errno, ECHILD);
}

Test(fleet, a_missing_binary_fails, .timeout = 60)
{
    setenv("REDLOCK_REDIS_SERVER", "/nonexistent/redis-server", 1);
    cr_expect_null(fleet_start(1, NULL));
    cr_expect_null(fleet_start(0, NULL));
}

/*
 * Fork a child that starts a fleet, sends its pids and directory through a
 * pipe, then calls end() without stopping the fleet. Checks that every
 * server is gone soon after, and returns 1 if the directory is still there
 * after 3 s (then removes it), else 0.
 */
static int leftover_after_child(void (*end)(void))
{
    /* Whatever the child leaves (its servers, the janitor) is then
     * reparented to us rather than init: ours to reap, no zombie left. */
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t child = fork();
    if (child == 0) {
        /* No cr_* call in here: the child must not talk to Criterion. */
        close(fds[0]);
        fleet *f = fleet_start(2, NULL);
        if (f == NULL)
            _exit(3);
        pid_t pids[2] = {fleet_pid(f, 0), fleet_pid(f, 1)};
        char dir[4096] = {0};
        snprintf(dir, sizeof(dir), "%s", fleet_dir(f));
        if (write(fds[1], pids, sizeof(pids)) != (ssize_t)sizeof(pids) ||
            write(fds[1], dir, sizeof(dir)) != (ssize_t)sizeof(dir))
            _exit(4);
        end();
        _exit(5);
    }
    cr_assert_geq(child, 0);
    close(fds[1]);
    pid_t pids[2];
    char dir[4096];
    int got = read(fds[0], pids, sizeof(pids)) == (ssize_t)sizeof(pids) &&
              read(fds[0], dir, sizeof(dir)) == (ssize_t)sizeof(dir);
    close(fds[0]);
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(got, "the child did not start its fleet");

    double deadline = tc_now_ms() + 3000;
    for (size_t i = 0; i < 2; i++) {
        while (waitpid(pids[i], &status, WNOHANG) == 0 && tc_now_ms() < deadline)
            tc_sleep_ms(10);
        cr_expect(process_gone(pids[i]), "server %zu outlived its process", i);
    }
    while (path_exists(dir) && tc_now_ms() < deadline)
        tc_sleep_ms(10);
    /* Reap the janitor once its rm is done (ECHILD: nothing left). */
    double reap_deadline = tc_now_ms() + 3000;
    for (pid_t r = 0; r >= 0 && tc_now_ms() < reap_deadline;) {
        r = waitpid(-1, &status, WNOHANG);
        if (r == 0)
            tc_sleep_ms(5);
    }
    if (!path_exists(dir))
        return 0;
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 1;
}

static void crash(void)
{
    raise(SIGKILL);
}

static void exit_without_stopping(void)
{
    exit(0);
}

Test(fleet, servers_die_with_a_crashed_process, .timeout = 60)
{
    cr_expect_eq(leftover_after_child(crash), 0, "the janitor removes the directory");
}

Test(fleet, exit_stops_a_fleet_left_running, .timeout = 60)
{
    cr_expect_eq(leftover_after_child(exit_without_stopping), 0, "atexit removes the directory");
}

/* PTTL of key on server i after it was set with PX 30000 and our clock
 * ran wait_ms: how far the server's expiry clock advanced meanwhile. */
static long long advanced_ms(size_t i, const char *key)
{
    long long pttl = fleet_pttl(fl, i, key, strlen(key));
    cr_assert_geq(pttl, 0, "server %zu: %s gone (PTTL %lld)", i, key, pttl);
    return 30000 - pttl;
}

Test(fleet, a_fake_clock_runs_fast_steps_and_survives_a_restart, .fini = stop_fleet, .timeout = 60)
{
    static const char *const clocks[] = {NULL, "+0 x3", "+0"};
    fleet_options opts = {.faketime = clocks};
    fl = fleet_start(3, &opts);
    cr_assert_not_null(fl, "servers under libfaketime did not start");
    cr_assert_eq(fleet_set_faketime(fl, 0, "+5"), -1, "server 0 runs on the real clock");

    int64_t start = tc_now_us(); /* before any key is set: ours is the longest */
    for (size_t i = 0; i < 3; i++) {
        redisReply *r = fleet_command(fl, i, "SET k v PX 30000");
        cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
        freeReplyObject(r);
    }
    tc_sleep_ms(500);
    long long real = advanced_ms(0, "k");
    long long fast = advanced_ms(1, "k");
    int64_t ours_ms = (tc_now_us() - start) / 1000 + 1;
    cr_assert_leq(real, ours_ms + 1, "the real clock advanced %lld ms in %lld", real,
                  (long long)ours_ms);
    /* x3, give or take the moments between the SETs and between the reads
     * (long under valgrind): twice as fast at least. */
    cr_assert_geq(fast, 2 * real, "x3: advanced %lld ms while the real one %lld", fast, real);

    /* +10 s on server 2: its key lapses 10 s early, within the second
     * libfaketime takes to read the spec again. */
    cr_assert_eq(fleet_set_faketime(fl, 2, "+10"), 0);
    long long stepped = 0;
    int64_t until = tc_now_us() + fleet_scaled_ms(2000) * 1000;
    while (stepped < 10000 && tc_now_us() < until) {
        tc_sleep_ms(50);
        stepped = advanced_ms(2, "k");
    }
    cr_assert_geq(stepped, 10000, "the +10 s step did not show in 2 s (advanced %lld ms)", stepped);

    /* kill -9 and restart: it comes back on the same fake clock. */
    cr_assert_eq(fleet_kill(fl, 1), 0);
    cr_assert_eq(fleet_restart(fl, 1), 0);
    redisReply *r = fleet_command(fl, 1, "SET k v PX 30000");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    r = fleet_command(fl, 0, "SET k v PX 30000");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    tc_sleep_ms(300);
    real = advanced_ms(0, "k");
    fast = advanced_ms(1, "k");
    cr_assert_geq(fast, 2 * real, "after the restart: advanced %lld ms, the real one %lld", fast,
                  real);

    /* libfaketime's shared memory goes with each server the fleet kills. */
    pid_t pids[2] = {fleet_pid(fl, 1), fleet_pid(fl, 2)};
    char shm[64];
    snprintf(shm, sizeof(shm), "/dev/shm/faketime_shm_%ld", (long)pids[0]);
    cr_assert_eq(access(shm, F_OK), 0, "libfaketime made no %s: nothing to check", shm);
    fleet_stop(fl);
    fl = NULL;
    for (size_t k = 0; k < 2; k++) {
        char path[64];
        snprintf(path, sizeof(path), "/dev/shm/faketime_shm_%ld", (long)pids[k]);
        cr_expect_neq(access(path, F_OK), 0, "%s left behind", path);
        snprintf(path, sizeof(path), "/dev/shm/sem.faketime_sem_%ld", (long)pids[k]);
        cr_expect_neq(access(path, F_OK), 0, "%s left behind", path);
    }
}
