/* SPDX-License-Identifier: BSD-3-Clause */
/* The status table, outcome and lock state names, version. */
#include "redlock/redlock.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

Test(status, every_status_has_a_distinct_message_and_name)
{
    static const int all[] = {
#define RL_TEST_STATUS_(name, value, msg) REDLOCK_##name,
        REDLOCK_STATUS_MAP(RL_TEST_STATUS_)
#undef RL_TEST_STATUS_
    };
    size_t n = sizeof(all) / sizeof(all[0]);
    for (size_t i = 0; i < n; i++) {
        cr_assert_str_neq(redlock_strerror(all[i]), "unknown status");
        cr_assert_eq(strncmp(redlock_status_name(all[i]), "REDLOCK_", 8), 0);
        for (size_t j = i + 1; j < n; j++) {
            cr_assert_neq(all[i], all[j]);
            cr_assert_str_neq(redlock_strerror(all[i]), redlock_strerror(all[j]));
        }
    }
}

Test(status, statuses_are_stable_numbers)
{
    cr_assert_eq(REDLOCK_OK, 0);
    cr_assert_eq(REDLOCK_ECONFLICT, -1);
    cr_assert_eq(REDLOCK_ENOQUORUM, -2);
    cr_assert_eq(REDLOCK_EEXPIRED, -3);
    cr_assert_eq(REDLOCK_ENOTOWNER, -4);
    cr_assert_eq(REDLOCK_EINVAL, -5);
    cr_assert_eq(REDLOCK_ENOMEM, -6);
    cr_assert_str_eq(redlock_status_name(REDLOCK_ENOQUORUM), "REDLOCK_ENOQUORUM");
}

Test(status, unknown_values_are_explained_not_crashed_on)
{
    cr_assert_str_eq(redlock_strerror(12345), "unknown status");
    cr_assert_str_eq(redlock_status_name(-999), "REDLOCK_UNKNOWN");
    cr_assert_str_eq(redlock_master_outcome_name(-1), "unknown");
    cr_assert_str_eq(redlock_master_outcome_name(99), "unknown");
}

Test(status, outcome_names)
{
    cr_assert_str_eq(redlock_master_outcome_name(REDLOCK_MASTER_OK), "ok");
    cr_assert_str_eq(redlock_master_outcome_name(REDLOCK_MASTER_HELD), "held");
    cr_assert_str_eq(redlock_master_outcome_name(REDLOCK_MASTER_NOT_CONNECTED), "not-connected");
    cr_assert_str_eq(redlock_master_outcome_name(REDLOCK_MASTER_PENDING), "pending");
}

/* Every row of the outcome and lock state tables: stable values, and the
 * name the table gives, distinct from the others. */
Test(status, outcome_and_lock_state_tables_give_stable_values_and_distinct_names)
{
    static const struct {
        int value, expected;
        const char *name;
    } outcomes[] = {
#define RL_TEST_OUTCOME_(name, value, text) {REDLOCK_MASTER_##name, value, text},
        REDLOCK_MASTER_OUTCOME_MAP(RL_TEST_OUTCOME_)
#undef RL_TEST_OUTCOME_
    }, states[] = {
#define RL_TEST_STATE_(name, value, text) {REDLOCK_LOCK_##name, value, text},
        REDLOCK_LOCK_STATE_MAP(RL_TEST_STATE_)
#undef RL_TEST_STATE_
    };
    size_t n_outcomes = sizeof(outcomes) / sizeof(outcomes[0]);
    size_t n_states = sizeof(states) / sizeof(states[0]);
    cr_assert_eq(n_outcomes, 10);
    cr_assert_eq(n_states, 5);
    for (size_t i = 0; i < n_outcomes; i++) {
        cr_assert_eq(outcomes[i].value, outcomes[i].expected);
        cr_assert_eq(outcomes[i].value, (int)i, "outcomes are numbered from 0 in table order");
        cr_assert_str_eq(redlock_master_outcome_name(outcomes[i].value), outcomes[i].name);
        for (size_t j = i + 1; j < n_outcomes; j++)
            cr_assert_str_neq(outcomes[i].name, outcomes[j].name);
    }
    for (size_t i = 0; i < n_states; i++) {
        cr_assert_eq(states[i].value, states[i].expected);
        cr_assert_eq(states[i].value, (int)i, "states are numbered from 0 in table order");
        cr_assert_str_eq(redlock_lock_state_name(states[i].value), states[i].name);
        for (size_t j = i + 1; j < n_states; j++)
            cr_assert_str_neq(states[i].name, states[j].name);
    }
    cr_assert_eq(REDLOCK_MASTER_PENDING, 7);
    cr_assert_eq(REDLOCK_LOCK_UNKNOWN, 4);
    cr_assert_str_eq(redlock_lock_state_name(REDLOCK_LOCK_RELEASED), "released");
    cr_assert_str_eq(redlock_lock_state_name(-1), "invalid");
    cr_assert_str_eq(redlock_lock_state_name(5), "invalid");
    cr_assert_eq(REDLOCK_MASTER_CLOCK, 8);
    static const char *const clock_names[] = {"off", "checking", "trusted", "fast"};
    for (int i = 0; i < 4; i++)
        cr_assert_str_eq(redlock_clock_state_name(i), clock_names[i]);
    cr_assert_eq(REDLOCK_CLOCK_FAST, 3);
    cr_assert_str_eq(redlock_clock_state_name(4), "invalid");
    cr_assert_str_eq(redlock_master_outcome_name(10), "unknown");
}

Test(status, version_matches_the_header)
{
    cr_assert_str_eq(redlock_version(), REDLOCK_VERSION_STRING);
    char expected[32];
    snprintf(expected, sizeof(expected), "%d.%d.%d", REDLOCK_VERSION_MAJOR, REDLOCK_VERSION_MINOR,
             REDLOCK_VERSION_PATCH);
    cr_assert_str_eq(redlock_version(), expected);
}
