/* SPDX-License-Identifier: BSD-3-Clause */
/* Holder metadata against five real masters: an acquire given a label
 * writes its host, pid, time and label in the value, which an inspect
 * reads back, on the plain, several-resource and fenced paths; a value
 * without it (an earlier version's) names no holder, and a release by
 * value works whatever the value's form. */
#include "harness.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static harness h;

static void five_masters(void)
{
    harness_start(&h, 5, NULL);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(holder, .init = five_masters, .fini = teardown, .timeout = 60);

static int64_t unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Every master that holds the key names this process, with label, since
 * a time in [t0, t1]; at least a quorum hold it. */
static void expect_holder(const redlock_result *r, const char *label, int64_t t0, int64_t t1)
{
    char host[REDLOCK_MAX_HOST_LEN + 2] = "";
    gethostname(host, sizeof(host) - 1);
    unsigned held = 0;
    for (unsigned i = 0; i < r->master_count; i++) {
        const redlock_master_result *m = &r->masters[i];
        if (m->value == NULL)
            continue;
        held++;
        redlock_holder who;
        cr_assert_eq(redlock_value_holder(m->value, m->value_len, &who), REDLOCK_OK,
                     "master %u: no holder in \"%s\"", i, m->value);
        cr_assert_eq(strncmp(who.host, host, REDLOCK_MAX_HOST_LEN), 0, "host %s, not %s",
                     who.host, host);
        cr_assert_eq(who.pid, (int64_t)getpid());
        cr_assert_str_eq(who.label, label);
        cr_assert(who.since_ms >= t0 - 1000 && who.since_ms <= t1 + 1000,
                  "since %lld outside [%lld, %lld]", (long long)who.since_ms, (long long)t0,
                  (long long)t1);
    }
    cr_assert_geq(held, r->quorum);
}

Test(holder, inspect_shows_the_label_host_pid_and_since_of_the_holder)
{
    harness_connect(&h);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    /* Spaces, a quote, '%' and ';': all carried through the escaping. */
    o.label = "deploy \"job\" 7; 100%";
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    int64_t t0 = unix_ms();
    cr_assert_eq(harness_acquire(&h, "job", 3, &o, &lock, NULL), REDLOCK_OK);
    int64_t t1 = unix_ms();
    /* The value has no space a shell or a log line would split it at. */
    size_t len = 0;
    const char *value = redlock_lock_value(lock, &len);
    cr_assert_eq(strchr(value, ' '), NULL, "value \"%s\"", value);
    cr_assert_gt(len, REDLOCK_VALUE_LEN);

    cr_assert_eq(harness_inspect(&h, "job", 3, &r), REDLOCK_OK);
    expect_holder(r, o.label, t0, t1);
    redlock_result_free(r);
    /* Extend and release compare the whole value, as always. */
    cr_assert_eq(harness_extend(&h, lock, 10000, NULL), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    cr_assert(harness_wait_key_gone(&h, "job", 3, 2000));
    redlock_lock_free(lock);
}

Test(holder, several_resources_and_fencing_carry_the_holder_too)
{
    harness_connect(&h);
    redlock_result *r = NULL;
    cr_assert_eq(harness_fencing_init(&h, 0, &r), REDLOCK_OK);
    redlock_result_free(r);
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    o.label = "batch-import";
    o.fencing = 1;
    const void *res[] = {"a", "b"};
    const size_t lens[] = {1, 1};
    redlock_lock *lock = NULL;
    int64_t t0 = unix_ms();
    cr_assert_eq(harness_acquire_many(&h, res, lens, 2, &o, &lock, NULL), REDLOCK_OK);
    int64_t t1 = unix_ms();
    cr_assert_neq(redlock_lock_fencing_token(lock), 0);
    cr_assert_eq(harness_inspect_many(&h, res, lens, 2, &r), REDLOCK_OK);
    expect_holder(r, "batch-import", t0, t1);
    for (unsigned i = 0; i < r->master_count; i++)
        if (r->masters[i].value != NULL)
            cr_assert_eq(r->masters[i].fencing_token, redlock_lock_fencing_token(lock));
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

Test(holder, labels_out_of_bounds_are_refused)
{
    harness_connect(&h);
    char long_label[REDLOCK_MAX_LABEL_LEN + 2];
    memset(long_label, 'x', sizeof(long_label) - 1);
    long_label[sizeof(long_label) - 1] = '\0';
    const char *bad[] = {"", long_label, "tab\there", "line\n", "caf\xc3\xa9"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        redlock_acquire_options o = fleet_acquire_options(10000, 0);
        o.label = bad[k];
        cr_assert_eq(harness_acquire(&h, "job", 3, &o, NULL, NULL), REDLOCK_EINVAL, "label %zu",
                     k);
    }
    long_label[REDLOCK_MAX_LABEL_LEN] = '\0'; /* the longest taken */
    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    o.label = long_label;
    redlock_lock *lock = NULL;
    redlock_result *r = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &o, &lock, NULL), REDLOCK_OK);
    cr_assert_eq(harness_inspect(&h, "job", 3, &r), REDLOCK_OK);
    expect_holder(r, long_label, 0, INT64_MAX - 1000);
    redlock_result_free(r);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);
}

/* A value as an earlier version writes it (32 hex digits) names no
 * holder; a value with a holder, held by a handle made from it (as a
 * process given it, or an earlier version, holds it), is released by
 * value all the same. */
Test(holder, a_value_without_metadata_names_no_holder_and_any_form_releases)
{
    harness_connect(&h);
    const char *old = "0123456789abcdef0123456789abcdef";
    for (size_t i = 0; i < 5; i++)
        freeReplyObject(fleet_command(h.fleet, i, "SET job %s PX 10000", old));
    redlock_result *r = NULL;
    cr_assert_eq(harness_inspect(&h, "job", 3, &r), REDLOCK_OK);
    for (unsigned i = 0; i < r->master_count; i++) {
        redlock_holder who;
        cr_assert_str_eq(r->masters[i].value, old);
        cr_assert_eq(redlock_value_holder(r->masters[i].value, r->masters[i].value_len, &who),
                     REDLOCK_EINVAL);
        cr_assert_str_eq(who.label, "");
    }
    redlock_result_free(r);
    redlock_lock *lock = NULL;
    cr_assert_eq(redlock_lock_new(&lock, "job", 3, old, strlen(old), 10000), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    redlock_lock_free(lock);

    redlock_acquire_options o = fleet_acquire_options(10000, 0);
    o.label = "worker";
    redlock_lock *held = NULL;
    cr_assert_eq(harness_acquire(&h, "job", 3, &o, &held, NULL), REDLOCK_OK);
    size_t len = 0;
    const char *value = redlock_lock_value(held, &len);
    cr_assert_eq(redlock_lock_new(&lock, "job", 3, value, len, 10000), REDLOCK_OK);
    cr_assert_eq(harness_release(&h, lock, NULL), REDLOCK_OK);
    cr_assert(harness_wait_key_gone(&h, "job", 3, 2000));
    redlock_lock_free(lock);
    redlock_lock_free(held);
    /* Malformed suffixes name no holder either. */
    const char *odd[] = {"0123456789abcdef0123456789abcdef;h=x;p=1;t=2",
                         "0123456789abcdef0123456789abcdef;h=x;p=;t=2;l=a",
                         "0123456789abcdef0123456789abcdef;h=x;p=1;t=2;l=a b",
                         "0123456789ABCDEF0123456789abcdef;h=x;p=1;t=2;l=a",
                         "0123456789abcdef0123456789abcdef;h=x;p=1;t=2;l=%4"};
    for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
        redlock_holder who;
        cr_assert_eq(redlock_value_holder(odd[k], strlen(odd[k]), &who), REDLOCK_EINVAL, "%s",
                     odd[k]);
    }
}
