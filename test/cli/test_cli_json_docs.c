/* SPDX-License-Identifier: BSD-3-Clause */
/* Every key the tool's --json output holds is documented: each command is
 * run against the fleet (a lock held by `run`, so that status shows a
 * holder and a fencing token), every key of its object is collected,
 * nested ones included, and docs/cli.md (REDLOCK_CLI_MD, generated from
 * tool/commands.c) must name each one in that command's section or in
 * "JSON output": as "KEY": in an example, or as `KEY` in the text. */
#include "cli_harness.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef REDLOCK_CLI_MD
#error "REDLOCK_CLI_MD (path of docs/cli.md) must be defined"
#endif

#define T CLI_RUN_TIMEOUT_MS

TestSuite(cli_json_docs, .init = cli_setup_five, .fini = cli_teardown, .timeout = 120);

/* The lines of docs/cli.md from the heading `start` (a whole line) to the
 * next heading of its level or above; NULL if there is no such heading. */
static char *doc_section(const char *md, const char *start)
{
    size_t start_len = strlen(start);
    const char *p = md;
    while (p != NULL && *p != '\0') {
        if (strncmp(p, start, start_len) == 0 && p[start_len] == '\n')
            break;
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (p == NULL || *p == '\0')
        return NULL;
    size_t level = strspn(start, "#");
    const char *end = strchr(p, '\n');
    while (end != NULL && end[1] != '\0') {
        const char *line = end + 1;
        size_t hashes = strspn(line, "#");
        if (hashes > 0 && hashes <= level && line[hashes] == ' ')
            break;
        end = strchr(line, '\n');
    }
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char *s = malloc(len + 1);
    cr_assert_not_null(s);
    memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

static bool names_key(const char *text, const char *key)
{
    char quoted[128];
    char marked[128];
    snprintf(quoted, sizeof(quoted), "\"%s\":", key);
    snprintf(marked, sizeof(marked), "`%s`", key);
    return strstr(text, quoted) != NULL || strstr(text, marked) != NULL;
}

typedef struct key_check {
    const char *section; /* the command's part of docs/cli.md */
    const char *json_output;
    char missing[2048]; /* "path, path, ", each once */
    const char *must_see; /* a path the output must hold, or NULL */
    bool seen;
    size_t count;       /* keys seen */
} key_check;

#define STACK_MAX 1024

/* A value still to look into, and where it is. */
typedef struct pending_value {
    json_t *value;
    char path[256];
} pending_value;

/* Every key of v (an object, or an array of them), nested ones included:
 * depth first, with a stack of what is left (the output nests a few
 * levels). The keys of an object of counts by outcome name ("outcomes")
 * are data, not keys. */
static void check_keys(key_check *kc, json_t *v)
{
    static pending_value stack[STACK_MAX];
    size_t depth = 0;
    stack[depth++] = (pending_value){.value = v};
    while (depth > 0) {
        pending_value top = stack[--depth];
        json_t *item;
        if (json_is_array(top.value)) {
            size_t i;
            json_array_foreach(top.value, i, item) {
                cr_assert(depth < STACK_MAX, "JSON too large for the check");
                stack[depth].value = item;
                int n = snprintf(stack[depth++].path, sizeof(stack[0].path), "%s[]", top.path);
                cr_assert(n > 0 && (size_t)n < sizeof(stack[0].path), "path too long");
            }
            continue;
        }
        if (!json_is_object(top.value))
            continue;
        const char *key;
        json_object_foreach(top.value, key, item) {
            char member_path[sizeof(top.path)];
            int n = snprintf(member_path, sizeof(member_path), "%s%s%s", top.path,
                             top.path[0] ? "." : "", key);
            cr_assert(n > 0 && (size_t)n < sizeof(member_path), "path too long: %s", key);
            kc->count++;
            kc->seen = kc->seen || (kc->must_see && strcmp(member_path, kc->must_see) == 0);
            char listed[sizeof(member_path) + 1];
            snprintf(listed, sizeof(listed), "%s,", member_path);
            if (!names_key(kc->section, key) && !names_key(kc->json_output, key) &&
                strstr(kc->missing, listed) == NULL) {
                size_t used = strlen(kc->missing);
                snprintf(kc->missing + used, sizeof(kc->missing) - used, "%s, ", member_path);
            }
            if (strcmp(key, "outcomes") == 0)
                continue;
            cr_assert(depth < STACK_MAX, "JSON too large for the check");
            stack[depth].value = item;
            memcpy(stack[depth++].path, member_path, sizeof(member_path));
        }
    }
}

/* check's exit codes with findings or unsafe masters, beside 0. */
#define CHECK_FINDINGS (-1)

/* Run the command with --json, expecting exit code (CHECK_FINDINGS: 0, 1 or
 * 69); fail unless every key of its output is documented, and (must_see not
 * NULL) the output holds that path. */
static size_t expect_documented(const char *md, const char *command, const char *const args[],
                                int code, const char *must_see)
{
    const cli_result *r = cli_run(args, NULL, T);
    if (code == CHECK_FINDINGS)
        cr_assert(r->exit_code == 0 || r->exit_code == 1 || r->exit_code == 69,
                  "%s: exit %d:\n%s%s", r->cmdline, r->exit_code, r->out, r->err);
    else
        cli_expect_exit(r, code);
    json_error_t err;
    json_t *o = json_loads(r->out, 0, &err);
    cr_assert(json_is_object(o), "%s: no JSON object (%s):\n%s", r->cmdline, err.text, r->out);
    char heading[64];
    snprintf(heading, sizeof(heading), "### %s", command);
    key_check kc = {.must_see = must_see};
    char *section = doc_section(md, heading);
    char *json_output = doc_section(md, "## JSON output");
    cr_assert_not_null(section, "%s: no section \"%s\"", REDLOCK_CLI_MD, heading);
    cr_assert_not_null(json_output, "%s: no section \"JSON output\"", REDLOCK_CLI_MD);
    kc.section = section;
    kc.json_output = json_output;
    check_keys(&kc, o);
    json_decref(o);
    free(section);
    free(json_output);
    cr_expect(must_see == NULL || kc.seen, "%s: no %s in\n%s", r->cmdline, must_see, r->out);
    cr_expect(kc.missing[0] == '\0',
              "%s --json: keys that docs/cli.md names neither in \"### %s\" nor in "
              "\"JSON output\": %s",
              command, command, kc.missing);
    return kc.count;
}

#define ARGS(...) CLI_ARGS("--config", cli.config, __VA_ARGS__)

Test(cli_json_docs, every_key_of_every_commands_json_is_documented)
{
    const char *md = cli_read_file(REDLOCK_CLI_MD);
    cr_assert_not_null(md, "cannot read %s", REDLOCK_CLI_MD);

    /* A lock held by run, with its holder and a fencing token, for status. */
    /* CMD holds it until the test is done with it (20 s at most). */
    const char *started = cli_path("started");
    const char *done = cli_path("done");
    cli_proc *run = cli_spawn(
        ARGS("run", "--ttl", "10s", "json-docs-held", "--", "/bin/sh", "-c",
             cli_format("touch '%s'; i=0; while [ ! -e '%s' ] && [ $i -lt 400 ]; do "
                        "sleep 0.05; i=$((i + 1)); done",
                        started, done)),
        NULL);
    cr_assert(cli_wait_until(cli_file_exists, (void *)started, 10000),
              "run did not start its command");

    size_t keys = expect_documented(md, "status", ARGS("status", "--json", "json-docs-held"), 0,
                                    "masters[].holder.label");
    cli_write_file("done", "", 0600);
    keys += expect_documented(md, "ping", ARGS("ping", "--json"), 0, "masters[].clock.state");
    /* The fleet's masters need not be set up for Redlock (eviction,
     * persistence): findings are fine here, a failure to run is not. */
    keys += expect_documented(md, "check", ARGS("check", "--json"), CHECK_FINDINGS,
                              "masters[].clock.verdict");

    const cli_result *acquired =
        cli_run(ARGS("acquire", "--fencing", "--ttl", "10s", "json-docs-own"), NULL, T);
    cli_expect_exit(acquired, 0);
    const char *value = cli_format("%s", cli_first_line(acquired->out));
    keys += expect_documented(md, "acquire", ARGS("acquire", "--json", "json-docs-other"), 0,
                              NULL);
    keys += expect_documented(md, "extend",
                              ARGS("extend", "--json", "--ttl", "10s", "json-docs-own", value),
                              0, NULL);
    keys += expect_documented(md, "release", ARGS("release", "--json", "json-docs-own", value), 0,
                              NULL);
    keys += expect_documented(md, "fencing-init", ARGS("fencing-init", "--json"), 0, NULL);

    cli_expect_exit(cli_wait(run, T), 0);
    cr_expect(keys > 100, "only %zu keys seen: has the output changed shape?", keys);
}
