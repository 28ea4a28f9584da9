/* SPDX-License-Identifier: BSD-3-Clause */
/* The redlock tool's exit statuses for a library status and its masters'
 * outcomes (tool/exit_status.c, docs/cli.md). */
#include "cli.h"

#include <criterion/criterion.h>

/* A result of five masters with the given outcomes. */
static redlock_result five(redlock_master_result *m, const int outcomes[5])
{
    for (size_t i = 0; i < 5; i++)
        m[i] = (redlock_master_result){.name = "m", .outcome = outcomes[i]};
    return (redlock_result){.quorum = 3, .master_count = 5, .masters = m};
}

Test(cli_exit, held_is_75_or_the_conflict_exit_code)
{
    redlock_master_result m[5];
    const int held[5] = {REDLOCK_MASTER_HELD, REDLOCK_MASTER_HELD, REDLOCK_MASTER_HELD,
                         REDLOCK_MASTER_OK, REDLOCK_MASTER_OK};
    redlock_result r = five(m, held);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_ECONFLICT, &r, CLI_EXIT_HELD), 75);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_ECONFLICT, &r, 3), 3);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_OK, &r, 3), 0);
}

Test(cli_exit, no_quorum_is_69_and_refused_credentials_77)
{
    redlock_master_result m[5];
    const int down[5] = {REDLOCK_MASTER_NOT_CONNECTED, REDLOCK_MASTER_TIMEOUT,
                         REDLOCK_MASTER_ERROR, REDLOCK_MASTER_OK, REDLOCK_MASTER_OK};
    redlock_result r = five(m, down);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_ENOQUORUM, &r, 3), 69);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_EREPLY, &r, 3), 69);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_EEXPIRED, &r, 3), 69);
    cr_assert_eq(cli_exit_for(REDLOCK_ENOQUORUM, &r), 69);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_ENOQUORUM, NULL, 3), 69);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_EAUTH, NULL, 3), 77);
    cr_assert_eq(cli_exit_for(REDLOCK_EAUTH, NULL), 77);

    /* One master refusing our password among masters down: the library
     * says "no quorum", the credentials are what to fix. */
    const int mixed[5] = {REDLOCK_MASTER_AUTH_FAILED, REDLOCK_MASTER_NOT_CONNECTED,
                          REDLOCK_MASTER_NOT_CONNECTED, REDLOCK_MASTER_TIMEOUT,
                          REDLOCK_MASTER_OK};
    r = five(m, mixed);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_ENOQUORUM, &r, 3), 77);
    cr_assert_eq(cli_exit_for(REDLOCK_ENOQUORUM, &r), 77);
}

Test(cli_exit, an_answer_wins_over_refused_credentials)
{
    redlock_master_result m[5];
    const int held[5] = {REDLOCK_MASTER_HELD, REDLOCK_MASTER_HELD, REDLOCK_MASTER_HELD,
                         REDLOCK_MASTER_AUTH_FAILED, REDLOCK_MASTER_OK};
    redlock_result r = five(m, held);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_ECONFLICT, &r, CLI_EXIT_HELD), 75);
    const int absent[5] = {REDLOCK_MASTER_ABSENT, REDLOCK_MASTER_ABSENT, REDLOCK_MASTER_ABSENT,
                           REDLOCK_MASTER_AUTH_FAILED, REDLOCK_MASTER_OK};
    r = five(m, absent);
    cr_assert_eq(cli_exit_for(REDLOCK_ENOTOWNER, &r), 1);
}

Test(cli_exit, the_rest)
{
    cr_assert_eq(cli_exit_for(REDLOCK_OK, NULL), 0);
    cr_assert_eq(cli_exit_for(REDLOCK_EEXPIRED, NULL), 1);
    cr_assert_eq(cli_exit_for(REDLOCK_EINVAL, NULL), 64);
    cr_assert_eq(cli_exit_for(REDLOCK_ENOMEM, NULL), 70);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_EINVAL, NULL, 3), 64);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_ECANCELED, NULL, 3), 70);
}

/* The rule for masters restarted empty: a TTL over max_ttl_ms is a usage
 * error, a quorum refused for restarts (or clocks) is no quorum; docs/cli.md
 * names both where it lists the exit statuses (test/docs/check_docs.sh). */
Test(cli_exit, a_ttl_over_max_ttl_is_64_and_masters_not_counted_69)
{
    redlock_master_result m[5];
    const int excluded[5] = {REDLOCK_MASTER_CLOCK, REDLOCK_MASTER_CLOCK, REDLOCK_MASTER_CLOCK,
                             REDLOCK_MASTER_OK, REDLOCK_MASTER_OK};
    redlock_result r = five(m, excluded);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_EMAXTTL, NULL, 3), 64);
    cr_assert_eq(cli_exit_for(REDLOCK_EMAXTTL, NULL), 64);
    cr_assert_eq(cli_exit_for_acquire(REDLOCK_ERESTARTED, &r, 3), 69);
    cr_assert_eq(cli_exit_for(REDLOCK_ERESTARTED, &r), 69);
    cr_assert_eq(cli_exit_for(REDLOCK_ECLOCK, &r), 69);
}
