/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Round trips before the acquire: one `redlock run RESOURCE -- true` of the
 * tool, its masters given as the recording proxy's ports (hold_proxy.c),
 * and for each master the turn of the first request naming RESOURCE on
 * its connection -- the SET of a plain acquire, the script of a fenced
 * one: how many times the tool waited for that master's replies before
 * asking for the lock. Everything the tool sent is kept, in order.
 */
#include "hold.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TOOL_MAX_NS (30 * (int64_t)1000000000)
#define TOOL_LOG_LINE 200
#define PATH_SIZE 320

/* A config naming the masters: the proxy's ports, or (proxy NULL) the
 * masters themselves. False on failure. */
static bool write_config(const char *path, const hold_proxy *proxy, const bench_masters *ms)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    fprintf(f, "# redlock-hold-bench: its masters%s\n",
            proxy ? ", through the recording proxy" : "");
    /* Started moments ago by this run, they would look restarted (and not
     * count for max_ttl_ms): declared durable, as the test fleets do. */
    if (ms->started_here)
        fprintf(f, "durable: true\n");
    fprintf(f, "nodes:\n");
    for (size_t i = 0; i < ms->n; i++)
        fprintf(f, "  - host: %s\n    port: %d\n", proxy ? "127.0.0.1" : ms->host[i],
                proxy ? hold_proxy_port(proxy, i) : ms->port[i]);
    return fclose(f) == 0;
}

/* Run the tool (argv), output to log; its exit status, or -1 when it could
 * not run, died of a signal or was killed at the time limit. */
static int run_tool(const char *tool, char *const argv[], const char *log, double *seconds)
{
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid;
    int64_t t0 = tc_now_ns();
    int rc = posix_spawn(&pid, tool, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
        return -1;
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 && tc_now_ns() - t0 < TOOL_MAX_NS)
        tc_sleep_ms(1);
    if (seconds != NULL)
        *seconds = (double)(tc_now_ns() - t0) / 1e9;
    if (done != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The first line of the tool's output, for a message. */
static void first_line(const char *log, char *out, size_t size)
{
    out[0] = '\0';
    FILE *f = fopen(log, "r");
    if (f == NULL)
        return;
    if (fgets(out, (int)size, f) != NULL)
        out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

/* Per master, the turn of its first request naming the resource. */
static void count_turns(hold_rtt *out, size_t masters)
{
    out->before_min = out->before_max = -1;
    for (size_t m = 0; m < masters; m++) {
        for (size_t k = 0; k < out->ncommands; k++) {
            const proxy_command *c = &out->commands[k];
            if (c->master != m || !c->names_resource)
                continue;
            int turn = (int)c->turn;
            if (out->before_min < 0 || turn < out->before_min)
                out->before_min = turn;
            if (turn > out->before_max)
                out->before_max = turn;
            if (out->masters_asked++ == 0)
                snprintf(out->first_request, sizeof(out->first_request), "%s", c->text);
            break;
        }
    }
}

/* The temporary directory's files. */
typedef struct rtt_files {
    char dir[256];
    char direct[PATH_SIZE]; /* a config naming the masters themselves */
    char proxied[PATH_SIZE]; /* one naming the proxy's ports */
    char log[PATH_SIZE];
} rtt_files;

static bool make_files(rtt_files *t)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(t->dir, sizeof(t->dir), "%s/redlock-hold-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(t->dir) == NULL)
        return false;
    snprintf(t->direct, sizeof(t->direct), "%s/direct.yaml", t->dir);
    snprintf(t->proxied, sizeof(t->proxied), "%s/proxied.yaml", t->dir);
    snprintf(t->log, sizeof(t->log), "%s/tool.log", t->dir);
    return true;
}

static void remove_files(const rtt_files *t)
{
    unlink(t->direct);
    unlink(t->proxied);
    unlink(t->log);
    rmdir(t->dir);
}

/* The tool's run through the proxy, recorded into out. */
static void run_through_proxy(const bench_masters *ms, const char *tool, const char *resource,
                              bool fenced, const rtt_files *t, hold_rtt *out)
{
    hold_proxy *proxy = hold_proxy_start(ms, resource);
    if (proxy == NULL || !write_config(t->proxied, proxy, ms)) {
        snprintf(out->why_not, sizeof(out->why_not), "cannot start the recording proxy");
    } else {
        char *plain[] = {(char *)"redlock", (char *)"-c", (char *)t->proxied, (char *)"run",
                         (char *)"--no-fencing", (char *)resource, (char *)"--", (char *)"true",
                         NULL};
        char *fenced_argv[] = {(char *)"redlock", (char *)"-c", (char *)t->proxied,
                               (char *)"run", (char *)resource, (char *)"--", (char *)"true",
                               NULL};
        out->exit_status = run_tool(tool, fenced ? fenced_argv : plain, t->log, &out->seconds);
        tc_sleep_ms(50); /* the last bytes through the proxy */
        if (out->exit_status != 0) {
            char line[TOOL_LOG_LINE];
            first_line(t->log, line, sizeof(line));
            snprintf(out->why_not, sizeof(out->why_not), "%s exited with %d: %.100s", out->name,
                     out->exit_status, line);
        }
    }
    if (proxy != NULL)
        out->ncommands = hold_proxy_stop(proxy, &out->commands);
}

void hold_rtt_measure(const bench_masters *ms, const char *tool, const char *resource,
                      bool fenced, bool init_fencing, hold_rtt *out)
{
    memset(out, 0, sizeof(*out));
    out->name = fenced ? "redlock run" : "redlock run --no-fencing";
    out->exit_status = -1;
    out->before_min = out->before_max = -1;
    rtt_files t;
    if (tool == NULL || access(tool, X_OK) != 0) {
        snprintf(out->why_not, sizeof(out->why_not), "no redlock tool at %s (--tool)",
                 tool ? tool : "(none)");
        return;
    }
    if (!make_files(&t)) {
        snprintf(out->why_not, sizeof(out->why_not), "cannot make a temporary directory");
        return;
    }
    if (init_fencing) { /* not through the proxy: not part of the measure */
        char *argv[] = {(char *)"redlock", (char *)"-c", t.direct, (char *)"fencing-init", NULL};
        if (!write_config(t.direct, NULL, ms) || run_tool(tool, argv, t.log, NULL) != 0)
            fprintf(stderr, "redlock-hold-bench: redlock fencing-init failed\n");
    }
    run_through_proxy(ms, tool, resource, fenced, &t, out);
    count_turns(out, ms->n);
    out->measured = out->exit_status == 0 && out->masters_asked > 0;
    if (out->exit_status == 0 && !out->measured)
        snprintf(out->why_not, sizeof(out->why_not), "no request for the lock seen");
    remove_files(&t);
}

void hold_rtt_free(hold_rtt *r)
{
    free(r->commands);
    r->commands = NULL;
    r->ncommands = 0;
}
