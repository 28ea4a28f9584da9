/* SPDX-License-Identifier: BSD-3-Clause */
/* CLI-test harness: the fixture, files and configs, checks on results and
 * on the masters; see cli_harness.h. */
#include "cli_harness.h"

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

cli_fixture cli;

static struct {
    void **ptrs;
    size_t n, cap;
} owned;
static int dead_port_fd = -1;
static int dead_port;

/* ---- Waiting ---------------------------------------------------------- */

bool cli_wait_until(bool (*pred)(void *arg), void *arg, int timeout_ms)
{
    double deadline = tc_now_ms() + (double)fleet_scaled_ms(timeout_ms);
    while (!pred(arg)) {
        if (tc_now_ms() >= deadline)
            return false;
        tc_sleep_ms(5);
    }
    return true;
}

/* ---- Memory owned by the fixture --------------------------------------- */

void *cli_own(void *p)
{
    cr_assert_not_null(p, "out of memory");
    if (owned.n == owned.cap) {
        size_t cap = owned.cap ? owned.cap * 2 : 64;
        void **grown = realloc(owned.ptrs, cap * sizeof(*grown));
        cr_assert_not_null(grown, "out of memory");
        owned.ptrs = grown;
        owned.cap = cap;
    }
    owned.ptrs[owned.n++] = p;
    return p;
}

bool cli_file_exists(void *path)
{
    return access(path, F_OK) == 0;
}

static void free_owned(void)
{
    for (size_t i = 0; i < owned.n; i++)
        free(owned.ptrs[i]);
    free(owned.ptrs);
    memset(&owned, 0, sizeof(owned));
}

static __attribute__((format(printf, 1, 2))) char *str_printf(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return cli_own(n < 0 ? NULL : s);
}

/* ---- Files ------------------------------------------------------------- */

const char *cli_format(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return cli_own(n < 0 ? NULL : s);
}

const char *cli_path(const char *name)
{
    return str_printf("%s/%s", cli.dir, name);
}

static void make_dir(const char *path)
{
    cr_assert(mkdir(path, 0700) == 0 || errno == EEXIST, "mkdir %s: %s", path, strerror(errno));
}

/* mkdir -p of the directories leading to path, below cli.dir. */
static void make_parents(const char *path)
{
    char *copy = cli_own(strdup(path));
    for (char *slash = copy + strlen(cli.dir) + 1; (slash = strchr(slash, '/')) != NULL;
         slash++) {
        *slash = '\0';
        make_dir(copy);
        *slash = '/';
    }
}

const char *cli_write_file(const char *name, const char *text, int mode)
{
    const char *path = cli_path(name);
    make_parents(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)mode);
    cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int saved = errno;
    fchmod(fd, (mode_t)mode); /* whatever the umask */
    close(fd);
    cr_assert_eq((size_t)n, len, "write %s: %s", path, strerror(saved));
    return path;
}

const char *cli_read_file(const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    size_t cap = 0;
    for (;;) {
        if (cap - len < 4096) {
            cap = cap ? cap * 2 : 8192;
            char *grown = realloc(buf, cap);
            cr_assert_not_null(grown, "out of memory");
            buf = grown;
        }
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    return cli_own(buf);
}

/* Passwords are written inside double quotes: keep them to characters that
 * need no escaping. */
static void check_plain(const char *what, const char *s)
{
    for (const char *c = s; *c != '\0'; c++)
        cr_assert(isalnum((unsigned char)*c) || strchr("_-.", *c) != NULL,
                  "test %s must be [A-Za-z0-9_.-]", what);
}

const char *const *cli_env_durable(const char *const env[])
{
    size_t n = 0;
    while (env != NULL && env[n] != NULL)
        n++;
    const char **out = cli_own(calloc(n + 2, sizeof(char *)));
    cr_assert_not_null(out);
    for (size_t i = 0; i < n; i++)
        out[i] = env[i];
    out[n] = cli_format("REDLOCK_CONFIG=%s", cli_write_config("durable.yaml", NULL));
    return out;
}

const char *cli_write_config(const char *name, const cli_config_options *o)
{
    static const cli_config_options defaults = {0};
    if (o == NULL)
        o = &defaults;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    cr_assert_not_null(m);
    fprintf(m, "# written by the CLI tests\n");
    fprintf(m, "connect_timeout_ms: %ld\n",
            o->connect_timeout_ms ? o->connect_timeout_ms : (long)fleet_scaled_ms(500));
    fprintf(m, "command_timeout_ms: %ld\n",
            o->command_timeout_ms ? o->command_timeout_ms : (long)fleet_scaled_ms(500));
    fprintf(m, "retry_count: %ld\n", o->retry_count ? o->retry_count : 3);
    fprintf(m, "retry_delay_ms: %ld\n", o->retry_delay_ms ? o->retry_delay_ms : 20);
    fprintf(m, "retry_jitter_ms: %ld\n", o->retry_jitter_ms ? o->retry_jitter_ms : 20);
    if (o->ttl_ms != 0)
        fprintf(m, "ttl_ms: %ld\n", o->ttl_ms);
    /* Masters started moments ago look restarted: declared durable, they
     * count at once (docs/safety.md, "Masters restarted empty"). */
    if (o->extra == NULL || strstr(o->extra, "durable:") == NULL)
        fprintf(m, "durable: true\n");
    if (o->extra != NULL)
        fprintf(m, "%s\n", o->extra);
    fprintf(m, "nodes:\n");
    size_t count = o->ports != NULL ? o->port_count : fleet_size(cli.fleet);
    for (size_t i = 0; i < count; i++) {
        int port = o->ports != NULL ? o->ports[i] : fleet_port(cli.fleet, i);
        fprintf(m, "  - host: 127.0.0.1\n    port: %d\n", port);
        if (o->password != NULL) {
            check_plain("passwords", o->password);
            fprintf(m, "    password: \"%s\"\n", o->password);
        }
        if (o->password_env != NULL)
            fprintf(m, "    password_env: %s\n", o->password_env);
        if (o->password_file != NULL)
            fprintf(m, "    password_file: %s\n", o->password_file);
    }
    cr_assert_eq(fclose(m), 0);
    cli_own(text);
    return cli_write_file(name, text, 0600);
}

int cli_dead_port(void)
{
    if (dead_port_fd >= 0)
        return dead_port;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_geq(fd, 0, "socket: %s", strerror(errno));
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        int saved = errno;
        close(fd);
        cr_assert_fail("bind 127.0.0.1:0: %s", strerror(saved));
    }
    dead_port_fd = fd;
    dead_port = ntohs(a.sin_port);
    return dead_port;
}

/* ---- Fixture ------------------------------------------------------------ */

static void require_program(const char *what, const char *path)
{
    cr_assert(access(path, X_OK) == 0, "%s is not built: %s: %s", what, path, strerror(errno));
}

void cli_setup(size_t masters, const fleet_options *opts)
{
    memset(&cli, 0, sizeof(cli));
    require_program("the redlock tool", REDLOCK_TOOL);
    require_program("monotime", MONOTIME);
    require_program("sigwatch", SIGWATCH);
    cli.fleet = fleet_start(masters, opts);
    cr_assert_not_null(cli.fleet, "could not start %zu redis-server masters", masters);
    /* A deployment set up as documented: `run` is fenced by default. */
    cr_assert_eq(fleet_init_fencing(cli.fleet), 0, "could not put the fencing counters in use");
    /* Inside the fleet's directory: removed with it, even by its janitor. */
    char *dir = str_printf("%s/cli", fleet_dir(cli.fleet));
    make_dir(dir);
    cli.dir = dir;
    cli.home = cli_format("%s/home", cli.dir);
    make_dir(cli.home);
    cli.xdg = cli_format("%s/xdg", cli.dir);
    make_dir(cli.xdg);
    cli_config_options o = {0};
    if (opts != NULL && opts->requirepass != NULL && opts->requirepass[0] != '\0')
        o.password = opts->requirepass;
    cli.config = cli_write_config("redlock.yaml", &o);
}

void cli_setup_five(void)
{
    cli_setup(CLI_MASTERS, NULL);
}

void cli_teardown(void)
{
    cli_processes_kill();
    fleet_stop(cli.fleet);
    cli_processes_reap_adopted();
    if (dead_port_fd >= 0)
        close(dead_port_fd);
    dead_port_fd = -1;
    free_owned();
    memset(&cli, 0, sizeof(cli));
}

/* ---- Checks on results ------------------------------------------------------ */

void cli_expect_exit(const cli_result *r, int code)
{
    cr_assert(r->signal == 0 && r->exit_code == code,
              "%s: expected exit status %d, got %s\n--- stdout ---\n%s--- stderr ---\n%s",
              r->cmdline, code,
              r->signal ? str_printf("signal %d", r->signal)
                        : str_printf("exit status %d", r->exit_code),
              r->out, r->err);
}

void cli_expect_one_error_line(const cli_result *r)
{
    const char *nl = strchr(r->err, '\n');
    cr_assert(strncmp(r->err, "redlock: ", 9) == 0 && nl != NULL && nl[1] == '\0' &&
                  nl - r->err > 9,
              "%s: expected one line on stderr starting with \"redlock: \", got:\n%s",
              r->cmdline, r->err);
}

const char *cli_first_line(const char *s)
{
    return cli_own(strndup(s, strcspn(s, "\n")));
}

bool cli_is_run_value(const char *s)
{
    size_t n = 0;
    while (isxdigit((unsigned char)s[n]))
        n++;
    return n == 32 && strncmp(s + n, ";h=", 3) == 0;
}

bool cli_is_value(const char *s)
{
    size_t n = 0;
    while (isxdigit((unsigned char)s[n]))
        n++;
    return n == 32 && s[n] == '\0';
}

/* ---- sigwatch records ------------------------------------------------------- */

long long cli_sigwatch_ns(const char *file, const char *event)
{
    const char *text = cli_read_file(file);
    size_t n = strlen(event);
    for (const char *line = text; line != NULL && *line != '\0';) {
        long long ns;
        if (strncmp(line, event, n) == 0 && line[n] == ' ' && sscanf(line + n, " %lld", &ns) == 1)
            return ns;
        line = strchr(line, '\n');
        line = line != NULL ? line + 1 : NULL;
    }
    return -1;
}

pid_t cli_sigwatch_pid(const char *file)
{
    const char *text = cli_read_file(file);
    long long ns;
    long pid;
    if (text == NULL || sscanf(text, "START %lld %ld", &ns, &pid) != 2)
        return 0;
    return (pid_t)pid;
}

/* ---- Masters ------------------------------------------------------------------- */

const char *cli_node(size_t i)
{
    return str_printf("127.0.0.1:%d", fleet_port(cli.fleet, i));
}

size_t cli_masters_holding(const char *key, const char *value)
{
    return fleet_count_value(cli.fleet, key, strlen(key), value, strlen(value));
}

static bool answering(size_t i)
{
    return fleet_pid(cli.fleet, i) != 0 && !fleet_is_paused(cli.fleet, i);
}

size_t cli_masters_with_key(const char *key)
{
    size_t n = 0;
    for (size_t i = 0; i < fleet_size(cli.fleet); i++)
        if (answering(i) && fleet_pttl(cli.fleet, i, key, strlen(key)) >= -1)
            n++;
    return n;
}

const char *cli_describe_key(const char *key)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    cr_assert_not_null(m);
    for (size_t i = 0; i < fleet_size(cli.fleet); i++) {
        char buf[128];
        size_t n = 0;
        int got = answering(i) ? fleet_get(cli.fleet, i, key, strlen(key), buf, sizeof(buf), &n)
                               : -1;
        fprintf(m, "%s%zu: ", i ? ", " : "", i);
        if (got == 1)
            fprintf(m, "%.*s pttl %lld", (int)(n < sizeof(buf) ? n : sizeof(buf)), buf,
                    fleet_pttl(cli.fleet, i, key, strlen(key)));
        else
            fputs(got == 0 ? "absent" : "not answering", m);
    }
    fclose(m);
    return cli_own(text);
}

void cli_expect_key_gone(const char *key, const char *context)
{
    cr_assert_eq(cli_masters_with_key(key), 0, "%s: \"%s\" is still on some master: %s", context,
                 key, cli_describe_key(key));
}

long long cli_keys_total(void)
{
    long long total = 0;
    for (size_t i = 0; i < fleet_size(cli.fleet); i++) {
        if (!answering(i))
            continue;
        redisReply *r = fleet_command(cli.fleet, i, "DBSIZE");
        bool ok = r != NULL && r->type == REDIS_REPLY_INTEGER;
        if (ok)
            total += r->integer;
        if (r != NULL)
            freeReplyObject(r);
        if (!ok)
            return -1;
        /* The fencing counter is the deployment's, not a lock's. */
        r = fleet_command(cli.fleet, i, "EXISTS %s", REDLOCK_FENCING_KEY);
        if (r != NULL && r->type == REDIS_REPLY_INTEGER)
            total -= r->integer;
        if (r != NULL)
            freeReplyObject(r);
        /* A clock probe is the tool's, not a lock's: one whose connection
         * timed out in its handshake (a loaded machine) outlives the tool
         * by its life (src/master/clock_probe.h). */
        r = fleet_command(cli.fleet, i, "KEYS redlock:clock:*");
        if (r != NULL && r->type == REDIS_REPLY_ARRAY)
            total -= (long long)r->elements;
        if (r != NULL)
            freeReplyObject(r);
    }
    return total;
}

const char *cli_keys_listing(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    cr_assert_not_null(m);
    for (size_t i = 0; i < fleet_size(cli.fleet); i++) {
        fprintf(m, "%s%zu:", i ? "; " : "", i);
        redisReply *r = answering(i) ? fleet_command(cli.fleet, i, "KEYS *") : NULL;
        if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
            fputs(" not answering", m);
        } else {
            for (size_t k = 0; k < r->elements && k < 8; k++) {
                const redisReply *key = r->element[k];
                fprintf(m, " %.*s (pttl %lld)", (int)key->len, key->str,
                        fleet_pttl(cli.fleet, i, key->str, key->len));
            }
            if (r->elements > 8)
                fprintf(m, " and %zu more", r->elements - 8);
        }
        if (r != NULL)
            freeReplyObject(r);
    }
    fclose(m);
    return cli_own(text);
}

size_t cli_masters_with_pttl(const char *key, const char *value, long long min_ms,
                             long long max_ms)
{
    size_t n = 0;
    for (size_t i = 0; i < fleet_size(cli.fleet); i++) {
        char buf[128];
        size_t len = 0;
        if (!answering(i) ||
            fleet_get(cli.fleet, i, key, strlen(key), buf, sizeof(buf), &len) != 1 ||
            len != strlen(value) || memcmp(buf, value, len) != 0)
            continue;
        long long pttl = fleet_pttl(cli.fleet, i, key, strlen(key));
        if (pttl > min_ms && pttl <= max_ms)
            n++;
    }
    return n;
}

void cli_expect_key_expiring(const char *key, long long ttl_ms, const char *context)
{
    for (size_t i = 0; i < fleet_size(cli.fleet); i++) {
        if (!answering(i))
            continue;
        long long pttl = fleet_pttl(cli.fleet, i, key, strlen(key));
        cr_assert(pttl == -2 || (pttl > 0 && pttl <= ttl_ms),
                  "%s: \"%s\" on master %zu has PTTL %lld, not absent or at most %lld: %s",
                  context, key, i, pttl, ttl_ms, cli_describe_key(key));
    }
}

/* ---- Losing a lock held by `redlock run` ------------------------------------- */

#define LOST_MAJORITY 3 /* masters 0 to 2 of CLI_MASTERS */

const char *cli_lost_config(void)
{
    cli_config_options o = {.command_timeout_ms = 200};
    return cli_write_config("lost.yaml", &o);
}

typedef struct pttl_watch {
    const char *key;
    long long last; /* -1 at first */
} pttl_watch;

static bool pttl_went_up(void *arg)
{
    pttl_watch *w = arg;
    long long pttl = fleet_pttl(cli.fleet, CLI_MASTERS - 1, w->key, strlen(w->key));
    bool grew = w->last > 0 && pttl > w->last;
    w->last = pttl;
    return grew;
}

bool cli_wait_extended(const char *key, int timeout_ms)
{
    pttl_watch w = {key, -1};
    if (!cli_wait_until(pttl_went_up, &w, timeout_ms))
        return false;
    tc_sleep_ms(CLI_LOST_TTL_MS / 6);
    return true;
}

double cli_pause_majority(const char *key, double *paused_ms)
{
    *paused_ms = tc_now_ms();
    for (size_t i = 0; i < LOST_MAJORITY; i++)
        cr_assert_eq(fleet_pause(cli.fleet, i), 0);
    long long pttl = -2;
    for (size_t i = LOST_MAJORITY; i < CLI_MASTERS; i++) {
        long long p = fleet_pttl(cli.fleet, i, key, strlen(key));
        pttl = p > pttl ? p : pttl;
    }
    cr_assert(pttl > 0 && pttl <= CLI_LOST_TTL_MS, "PTTL %lld on the masters still up", pttl);
    return tc_now_ms() + (double)pttl;
}

void cli_resume_majority(const char *key)
{
    for (size_t i = 0; i < LOST_MAJORITY; i++)
        cr_assert_eq(fleet_resume(cli.fleet, i), 0);
    cli_expect_key_expiring(key, CLI_LOST_TTL_MS, "after the masters came back");
}

/* ---- Common commands and output ---------------------------------------------- */

const char *cli_acquire(const char *resource, const char *ttl)
{
    const cli_result *r =
        ttl != NULL
            ? cli_run(CLI_ARGS("--config", cli.config, "acquire", "--ttl", ttl, resource), NULL,
                      CLI_RUN_TIMEOUT_MS)
            : cli_run(CLI_ARGS("--config", cli.config, "acquire", resource), NULL,
                      CLI_RUN_TIMEOUT_MS);
    cli_expect_exit(r, 0);
    const char *value = cli_first_line(r->out);
    cr_assert(cli_is_value(value), "%s: expected a 32-hex-digit value on line 1, got \"%s\"",
              r->cmdline, value);
    return value;
}

const char *cli_line_about(const char *text, const char *node)
{
    const char *found = NULL;
    size_t n = strlen(node);
    for (const char *at = strstr(text, node); at != NULL; at = strstr(at + n, node)) {
        if (isdigit((unsigned char)at[n]))
            continue;
        const char *start = at;
        while (start > text && start[-1] != '\n')
            start--;
        const char *line = cli_first_line(start);
        cr_assert(found == NULL || strcmp(found, line) == 0,
                  "two lines name %s:\n%s\n%s", node, found, line);
        found = line;
    }
    return found;
}
