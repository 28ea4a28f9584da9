/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The failover checker on logs written by hand: one log as the native suite
 * writes it, several as the compose drill collects them (one per client
 * container, each with its own pid namespace), a container killed with the
 * lock, the measured period, faults by kind, the verdict, and --mark.
 */
#include <criterion/criterion.h>

#include "checker.h"
#include "failover_log.h"
#include "offline.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QUORUM 3
#define TTL_MS 1500

/* A log with these lines (times in ms, written as ns: "S @100 7 ..." is S
 * at 100 ms), in a fresh temporary file whose path goes to path. */
static void write_log(char *path, size_t size, const char *const *lines)
{
    snprintf(path, size, "/tmp/redlock-checker-test-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *out = fdopen(fd, "w");
    cr_assert_not_null(out);
    for (size_t i = 0; lines[i] != NULL; i++) {
        const char *at = strchr(lines[i], '@');
        cr_assert_not_null(at, "%s", lines[i]);
        char *rest = NULL;
        long long ms = strtoll(at + 1, &rest, 10);
        fprintf(out, "%.*s%lld%s\n", (int)(at - lines[i]), lines[i], ms * 1000000LL, rest);
    }
    fclose(out);
}

static checker_report check(const char *const *const *logs, size_t count)
{
    char paths[8][64];
    const char *names[8];
    cr_assert_leq(count, 8);
    for (size_t i = 0; i < count; i++) {
        write_log(paths[i], sizeof(paths[i]), logs[i]);
        names[i] = paths[i];
    }
    checker_report r;
    cr_assert_eq(checker_run_files(names, count, QUORUM, &r), 0);
    for (size_t i = 0; i < count; i++)
        unlink(paths[i]);
    return r;
}

static unsigned long fault_count(const checker_report *r, const char *kind)
{
    for (size_t i = 0; i < CHECKER_MAX_FAULT_KINDS; i++)
        if (strcmp(r->faults[i].name, kind) == 0)
            return r->faults[i].count;
    return 0;
}

static int verdict(const checker_report *r, bool unsafe)
{
    FILE *sink = fopen("/dev/null", "w");
    cr_assert_not_null(sink);
    int rc = checker_verdict(sink, r, TTL_MS, unsafe);
    fclose(sink);
    return rc;
}

Test(checker, sections_one_after_another_pass)
{
    const char *const a[] = {"U @0 5",        "S @100 7 0 v1 1", "E @200 7 v1",
                             "S @210 8 0 v2 2", "E @300 8 v2",   "Z @400", NULL};
    const char *const *logs[] = {a};
    checker_report r = check(logs, 1);
    cr_assert_eq(r.sections, 2);
    cr_assert_eq(r.violations, 0);
    cr_assert_eq(r.unterminated, 0);
    cr_assert_eq(r.token_violations, 0);
    cr_assert_eq(verdict(&r, false), 0);
}

Test(checker, overlapping_sections_are_a_violation)
{
    const char *const a[] = {"U @0 5",      "S @100 7 0 v1 1", "S @150 8 0 v2 2",
                             "E @200 7 v1", "E @300 8 v2",     "Z @400", NULL};
    const char *const *logs[] = {a};
    checker_report r = check(logs, 1);
    cr_assert_eq(r.violations, 1);
    cr_assert_eq(verdict(&r, false), 1);
    cr_assert_eq(verdict(&r, true), 0, "an unsafe run reports, it does not fail");
}

/* A violation's story: the events from two seconds before its first
 * holder started to half a second after its second did, and no others. */
Test(checker, a_violation_shows_the_events_around_it)
{
    const char *const lines[] = {
        "U @0 5",           "F @100 stop 1", "S @3000 7 0 v1 1", "F @3100 kill-unsafe 2",
        "S @3200 8 0 v2 2", "E @3300 7 v1",  "E @3900 8 v2",     "F @4000 cont 1",
        "Z @5000",          NULL};
    char path[64];
    write_log(path, sizeof(path), lines);
    checker_report r;
    cr_assert_eq(checker_run(path, QUORUM, &r), 0);
    cr_assert_eq(r.violations, 1);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    cr_assert_not_null(out);
    checker_print_violation_events(out, path, &r, 100);
    fclose(out);
    unlink(path);
    cr_assert_not_null(strstr(text, "S 3000000000 7 0 v1 1"), "%s", text);
    cr_assert_not_null(strstr(text, "F 3100000000 kill-unsafe 2"), "%s", text);
    cr_assert_not_null(strstr(text, "E 3300000000 7 v1"), "%s", text);
    cr_assert_null(strstr(text, "F 100000000 stop"), "%s", text);
    cr_assert_null(strstr(text, "E 3900000000"), "%s", text);
    free(text);
}

/* Two containers both have a client with pid 7: the end of the one in log
 * B must not end the section of the one in log A. */
Test(checker, the_same_pid_in_two_logs_is_two_holders)
{
    const char *const a[] = {"U @0 5", "S @100 7 0 v1 1", "E @500 7 v1", "Z @1000", NULL};
    const char *const b[] = {"X @150 7", "S @200 9 0 v2 2", "E @300 9 v2", NULL};
    const char *const *logs[] = {a, b};
    checker_report r = check(logs, 2);
    cr_assert_eq(r.sections, 2);
    cr_assert_eq(r.violations, 1, "B's pid 7 ended, not A's: A still held the lock");
    cr_assert_eq(r.unterminated, 0);
}

/* A container killed with the lock: its section never logs an end. C ends
 * every section of its log; the lock frees itself after its TTL. */
Test(checker, a_container_killed_with_the_lock_ends_its_sections)
{
    const char *const a[] = {"U @0 5", "S @100 7 0 v1 1", "C @150", NULL};
    const char *const b[] = {"S @1700 7 0 v2 2", "E @1800 7 v2", "Z @2000", NULL};
    const char *const *logs[] = {a, b};
    checker_report r = check(logs, 2);
    cr_assert_eq(r.violations, 0);
    cr_assert_eq(r.unterminated, 0);
    cr_assert_eq(r.container_kills, 1);
    cr_assert_eq(fault_count(&r, "container-kill"), 1);
    cr_assert_eq(r.longest_gap_ns, 1550 * 1000000LL, "from the kill to the next section");
    cr_assert_eq(verdict(&r, false), 0);
}

Test(checker, a_section_that_never_ends_fails_the_run)
{
    const char *const a[] = {"U @0 5", "S @100 7 0 v1 1", "Z @400", NULL};
    const char *const *logs[] = {a};
    checker_report r = check(logs, 1);
    cr_assert_eq(r.unterminated, 1);
    cr_assert_eq(verdict(&r, false), 1);
}

/* Each container's program writes a Z when it stops, one after another:
 * the measured period ends at the first. */
Test(checker, the_first_z_ends_the_measured_period)
{
    const char *const a[] = {"U @0 5", "S @100 7 0 v1 1", "E @200 7 v1", "Z @1000", NULL};
    const char *const b[] = {"Z @9000", NULL};
    const char *const *logs[] = {a, b};
    checker_report r = check(logs, 2);
    cr_assert_eq(r.longest_gap_ns, 800 * 1000000LL);
    cr_assert_eq(verdict(&r, false), 0);
}

/* Liveness counts only while a majority is up. */
Test(checker, the_lock_free_too_long_with_a_majority_up_fails)
{
    const char *const a[] = {"U @0 5",    "S @100 7 0 v1 1", "E @200 7 v1", "U @300 2",
                             "U @20000 3", "S @20100 7 0 v2 2", "E @20200 7 v2",
                             "S @28000 8 0 v3 3", "E @28100 8 v3", "Z @28200", NULL};
    const char *const *logs[] = {a};
    checker_report r = check(logs, 1);
    cr_assert_eq(r.longest_gap_ns, 7800 * 1000000LL, "%lld", (long long)r.longest_gap_ns);
    cr_assert_eq(verdict(&r, false), 1, "7.8 s free is over the 6.5 s bound");
}

/* The longest free stretch tells when it began and what happened in it. */
Test(checker, the_longest_free_stretch_is_told)
{
    const char *const a[] = {"U @0 5",           "S @100 7 0 v1 1",   "E @1000 7 v1",
                             "F @1500 partition 4", "U @1500 4",      "N @2000 8 REDLOCK_ECONFLICT",
                             "N @2500 8 REDLOCK_ECONFLICT", "S @4000 8 0 v2 2", "E @4100 8 v2",
                             "Z @4200", NULL};
    const char *const *logs[] = {a};
    checker_report r = check(logs, 1);
    cr_assert_eq(r.longest_gap_ns, 3000 * 1000000LL, "%lld", (long long)r.longest_gap_ns);
    cr_assert_float_eq(r.longest_gap_from_s, 1.0, 1e-9);
    cr_assert_str_eq(r.longest_gap_story,
                     "+0.50 s partition m4, +0.50 s 4 up; attempts failed: REDLOCK_ECONFLICT 2");
}

Test(checker, faults_are_counted_by_kind)
{
    const char *const a[] = {"U @0 5",          "F @10 partition 2", "U @10 4",
                             "F @20 pause 1",   "U @20 3",          "F @30 heal 2",
                             "F @40 unpause 1", "F @50 kill-aof 3", "F @60 restart 3",
                             "F @70 partition 4", "K @80 7",        "Z @100",
                             "K @200 8", NULL};
    const char *const *logs[] = {a};
    checker_report r = check(logs, 1);
    cr_assert_eq(fault_count(&r, "partition"), 2);
    cr_assert_eq(fault_count(&r, "heal"), 1);
    cr_assert_eq(fault_count(&r, "pause"), 1);
    cr_assert_eq(fault_count(&r, "unpause"), 1);
    cr_assert_eq(fault_count(&r, "restart"), 1);
    cr_assert_eq(fault_count(&r, "client-kill"), 1, "the K after Z is the stop path's");
    cr_assert_eq(r.kills_aof, 1);
    cr_assert_eq(r.client_kills, 1);
}

Test(checker, a_token_lower_than_an_earlier_one_is_out_of_order)
{
    const char *const a[] = {"U @0 5",          "S @100 7 0 v1 5", "E @200 7 v1",
                             "S @300 8 0 v2 3", "E @400 8 v2",     "Z @500", NULL};
    const char *const *logs[] = {a};
    checker_report r = check(logs, 1);
    cr_assert_eq(r.token_violations, 1);
    cr_assert_eq(verdict(&r, false), 1);
}

Test(checker, a_missing_log_is_an_error)
{
    const char *names[] = {"/nonexistent/redlock-checker-test.log"};
    checker_report r;
    cr_assert_eq(checker_run_files(names, 1, QUORUM, &r), -1);
}

Test(checker, mark_appends_an_event_stamped_with_the_clock)
{
    char path[64];
    const char *const none[] = {NULL};
    write_log(path, sizeof(path), none);
    int64_t before = tc_now_ns();
    char *args[] = {path, "F", "partition", "2", NULL};
    cr_assert_eq(offline_mark(4, args), 0);
    char *bad[] = {path, "Q", "x", NULL};
    cr_assert_eq(offline_mark(3, bad), 64, "not an event of the log");
    char *short_args[] = {path, "F", "partition", NULL};
    cr_assert_eq(offline_mark(3, short_args), 64, "F needs its master");

    FILE *in = fopen(path, "r");
    cr_assert_not_null(in);
    char line[256];
    cr_assert_not_null(fgets(line, sizeof(line), in));
    cr_assert_null(fgets(line + 128, 128, in), "one line only");
    fclose(in);
    unlink(path);
    flog_event ev;
    cr_assert_eq(flog_parse(line, &ev), 0, "%s", line);
    cr_assert_eq(ev.type, 'F');
    cr_assert_str_eq(ev.text, "partition");
    cr_assert_eq(ev.pid, 2);
    cr_assert_geq(ev.t, before);
    cr_assert_leq(ev.t, tc_now_ns());
}

/* A semaphore of two: two holders at once are allowed, a third is one too
 * many; tokens of different slots are not compared. */
Test(checker, a_semaphore_allows_its_slots_and_not_one_more)
{
    const char *const two[] = {"U @0 5",          "S @1000 7 0 v1 9", "S @1100 8 0 v2 3",
                               "E @1500 7 v1",    "E @1600 8 v2",     "Z @2000",
                               NULL};
    const char *const three[] = {"U @0 5",          "S @1000 7 0 v1 1", "S @1100 8 0 v2 2",
                                 "S @1200 9 0 v3 3", "E @1500 7 v1",    "E @1600 8 v2",
                                 "E @1700 9 v3",    "Z @2000",          NULL};
    char path[64];
    checker_report r;
    write_log(path, sizeof(path), two);
    cr_assert_eq(checker_run_slots(path, QUORUM, 2, &r), 0);
    cr_assert_eq(r.violations, 0);
    cr_assert_eq(r.token_violations, 0, "slot tokens compared");
    cr_assert_eq(checker_run(path, QUORUM, &r), 0);
    cr_assert_eq(r.violations, 1, "a lock allows one");
    unlink(path);
    write_log(path, sizeof(path), three);
    cr_assert_eq(checker_run_slots(path, QUORUM, 2, &r), 0);
    cr_assert_eq(r.violations, 1, "the third holder");
    unlink(path);
}
