/* SPDX-License-Identifier: BSD-3-Clause */
/* Lock values and jitter from getrandom(2). */
#include "random.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

Test(random, values_are_32_lowercase_hex_digits)
{
    char value[REDLOCK_VALUE_LEN + 1];
    cr_assert_eq(rl_random_value(value), 0);
    cr_assert_eq(strlen(value), 32);
    cr_assert_eq(strspn(value, "0123456789abcdef"), 32);
}

static int compare_values(const void *a, const void *b)
{
    return strcmp(a, b);
}

Test(random, values_do_not_repeat)
{
    enum { COUNT = 20000 };
    static char values[COUNT][REDLOCK_VALUE_LEN + 1];
    int failures = 0;
    for (int i = 0; i < COUNT; i++)
        failures += rl_random_value(values[i]) != 0;
    cr_assert_eq(failures, 0);
    qsort(values, COUNT, sizeof(values[0]), compare_values);
    int repeats = 0;
    for (int i = 1; i < COUNT; i++)
        repeats += strcmp(values[i - 1], values[i]) == 0;
    cr_assert_eq(repeats, 0, "%d repeated values among %d", repeats, COUNT);
}

Test(random, every_hex_digit_shows_up_in_every_position)
{
    /* 128 bits really vary: over 400 values each of the 32 positions sees
     * all 16 digits (failing by chance has probability below 1e-9). */
    unsigned seen[REDLOCK_VALUE_LEN] = {0};
    for (int i = 0; i < 400; i++) {
        char value[REDLOCK_VALUE_LEN + 1];
        if (rl_random_value(value) != 0)
            cr_assert_fail("getrandom failed");
        for (int p = 0; p < REDLOCK_VALUE_LEN; p++) {
            int digit = value[p] <= '9' ? value[p] - '0' : value[p] - 'a' + 10;
            seen[p] |= 1U << digit;
        }
    }
    for (int p = 0; p < REDLOCK_VALUE_LEN; p++)
        cr_assert_eq(seen[p], 0xffffU, "position %d saw %#x", p, seen[p]);
}

Test(random, jitter_stays_in_range_and_varies)
{
    cr_assert_eq(rl_random_jitter(0), 0);
    cr_assert_eq(rl_random_jitter(-5), 0);
    int64_t lo = INT64_MAX;
    int64_t hi = -1;
    for (int i = 0; i < 1000; i++) {
        int64_t j = rl_random_jitter(100);
        lo = j < lo ? j : lo;
        hi = j > hi ? j : hi;
    }
    cr_assert(lo >= 0 && lo < 10, "lowest jitter %lld", (long long)lo);
    cr_assert(hi > 90 && hi <= 100, "highest jitter %lld", (long long)hi);
}

Test(random, pool_words_vary_in_every_bit_and_leave_values_unique)
{
    /* Over 200 words each of the 64 bits is seen set and clear (failing
     * by chance has probability below 1e-50); values drawn between them
     * are still fresh. */
    rl_random_pool pool;
    rl_random_pool_init(&pool);
    uint64_t set = 0;
    uint64_t clear = 0;
    char first[REDLOCK_VALUE_LEN + 1];
    char value[REDLOCK_VALUE_LEN + 1];
    cr_assert_eq(rl_random_pool_value(&pool, first), 0);
    for (int i = 0; i < 200; i++) {
        uint64_t w = rl_random_pool_word(&pool);
        set |= w;
        clear |= ~w;
        cr_assert_eq(rl_random_pool_value(&pool, value), 0);
        cr_assert_str_neq(value, first);
    }
    cr_assert_eq(set, UINT64_MAX);
    cr_assert_eq(clear, UINT64_MAX);
    rl_random_pool_clear(&pool);
}
