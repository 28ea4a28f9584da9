/* SPDX-License-Identifier: BSD-3-Clause */
/* Quorum and validity arithmetic, and how a failed tally is explained. */
#include "config_internal.h"
#include "quorum.h"

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

Test(arithmetic, quorum_is_a_strict_majority_for_one_to_nine_masters)
{
    static const unsigned expected[] = {0, 1, 2, 2, 3, 3, 4, 4, 5, 5};
    for (unsigned n = 1; n <= 9; n++) {
        unsigned q = rl_quorum_of(n);
        cr_assert_eq(q, expected[n], "N=%u: quorum %u", n, q);
        cr_assert_gt(2 * q, n, "N=%u: two quorums must overlap", n);
        cr_assert_leq(2 * (q - 1), n, "N=%u: quorum must be the smallest majority", n);
    }
}

Test(arithmetic, verdict_for_every_split_of_one_to_nine_masters)
{
    for (unsigned n = 1; n <= 9; n++) {
        unsigned q = rl_quorum_of(n);
        for (unsigned ok = 0; ok <= n; ok++) {
            for (unsigned pending = 0; ok + pending <= n; pending++) {
                rl_tally t = {.quorum = q, .ok = ok, .pending = pending,
                              .not_connected = n - ok - pending};
                rl_verdict v = rl_tally_verdict(&t);
                if (ok >= q)
                    cr_assert_eq(v, RL_QUORUM, "N=%u ok=%u pending=%u", n, ok, pending);
                else if (pending == 0)
                    cr_assert_eq(v, RL_NO_QUORUM, "N=%u ok=%u pending=%u", n, ok, pending);
                /* Else what the others say names the status: waited for. */
                else
                    cr_assert_eq(v, RL_UNDECIDED, "N=%u ok=%u pending=%u", n, ok, pending);
            }
        }
    }
}

Test(arithmetic, decided_early_as_soon_as_a_majority_said_ok)
{
    /* 3 of 5 OK with two still silent: decided, no need to wait. */
    rl_tally t = {.quorum = 3, .ok = 3, .pending = 2};
    cr_assert_eq(rl_tally_verdict(&t), RL_QUORUM);
    /* 3 refused: "held" whatever the other two say. */
    rl_tally held = {.quorum = 3, .refused = 3, .pending = 2};
    cr_assert_eq(rl_tally_verdict(&held), RL_NO_QUORUM);
    /* 2 refused, 1 down, 2 silent: no quorum either way, but a third
     * refusal would make it "held": waited for. */
    rl_tally w = {.quorum = 3, .refused = 2, .not_connected = 1, .pending = 2};
    cr_assert_eq(rl_tally_verdict(&w), RL_UNDECIDED);
    /* Unless the silent ones are masters not answering. */
    w.pending_suspect = 2;
    cr_assert_eq(rl_tally_verdict(&w), RL_NO_QUORUM);
}

Test(arithmetic, drift_is_one_percent_of_ttl_plus_two_ms)
{
    cr_assert_eq(rl_drift_us(10000, 0.01), 100000 + 2000);
    cr_assert_eq(rl_drift_us(1000, 0.0), 2000);
    cr_assert_eq(rl_drift_us(30000, 0.05), 1500000 + 2000);
}

Test(arithmetic, validity_subtracts_elapsed_and_drift)
{
    /* ttl 10 s, 3 ms elapsed, drift 100 ms + 2 ms. */
    cr_assert_eq(rl_validity_us(10000, 3000, 0.01), 10000000 - 3000 - 102000);
    /* Elapsed beyond ttl - drift: no validity left. */
    cr_assert_leq(rl_validity_us(1000, 990000, 0.01), 0);
    /* A ttl too short for the fixed 2 ms allowance never validates. */
    cr_assert_leq(rl_validity_us(2, 0, 0.0), 0);
    /* For every N the arithmetic does not depend on N. */
    for (int64_t elapsed = 0; elapsed <= 20000; elapsed += 5000)
        cr_assert_eq(rl_validity_us(5000, elapsed, 0.01), 5000000 - elapsed - 52000);
}

Test(arithmetic, failure_is_a_conflict_only_when_refusals_alone_rule_out_a_quorum)
{
    /* All 5 held elsewhere. */
    rl_tally all = {.quorum = 3, .refused = 5};
    cr_assert_eq(rl_tally_failure_status(&all, REDLOCK_ECONFLICT), REDLOCK_ECONFLICT);
    /* 3 of 5 said no: even with the other 2, no quorum. */
    rl_tally three = {.quorum = 3, .ok = 1, .refused = 3, .timeout = 1};
    cr_assert_eq(rl_tally_failure_status(&three, REDLOCK_ECONFLICT), REDLOCK_ECONFLICT);
    /* The same counts for extend/release say "not the owner". */
    cr_assert_eq(rl_tally_failure_status(&three, REDLOCK_ENOTOWNER), REDLOCK_ENOTOWNER);
    /* 2 OK, 1 no, 2 out of reach: had those answered yes, a quorum. Not
     * "not ours": an auto-extension must retry, not give the lock up. */
    rl_tally split = {.quorum = 3, .ok = 2, .refused = 1, .timeout = 1, .not_connected = 1};
    cr_assert_eq(rl_tally_failure_status(&split, REDLOCK_ENOTOWNER), REDLOCK_ENOQUORUM);
    /* 2 no, 3 down: the down ones decide it. */
    rl_tally down = {.quorum = 3, .refused = 2, .not_connected = 3};
    cr_assert_eq(rl_tally_failure_status(&down, REDLOCK_ECONFLICT), REDLOCK_ENOQUORUM);
    /* For every N and split: "no" exactly when refusals exceed N - quorum. */
    for (unsigned n = 1; n <= 9; n++) {
        unsigned q = rl_quorum_of(n);
        for (unsigned refused = 0; refused <= n; refused++) {
            rl_tally t = {.quorum = q, .refused = refused, .timeout = n - refused};
            bool definitive = refused > n - q;
            cr_assert_eq(rl_tally_failure_status(&t, REDLOCK_ENOTOWNER) == REDLOCK_ENOTOWNER,
                         definitive, "N=%u refused=%u", n, refused);
        }
    }
}

Test(arithmetic, failure_without_enough_answers_names_the_most_common_reason)
{
    rl_tally down = {.quorum = 3, .ok = 2, .not_connected = 2, .timeout = 1};
    cr_assert_eq(rl_tally_failure_status(&down, REDLOCK_ECONFLICT), REDLOCK_ENOQUORUM);
    rl_tally auth = {.quorum = 3, .auth_failed = 5};
    cr_assert_eq(rl_tally_failure_status(&auth, REDLOCK_ECONFLICT), REDLOCK_EAUTH);
    rl_tally errors = {.quorum = 3, .ok = 1, .error = 3, .not_connected = 1};
    cr_assert_eq(rl_tally_failure_status(&errors, REDLOCK_ECONFLICT), REDLOCK_EREPLY);
    /* Decided early, before the healthy masters answered: those count for
     * no reason, so the errors still name it. */
    rl_tally early = {.quorum = 3, .error = 2, .not_connected = 1, .pending = 2};
    cr_assert_eq(rl_tally_failure_status(&early, REDLOCK_ECONFLICT), REDLOCK_EREPLY);
    rl_tally early_auth = {.quorum = 3, .auth_failed = 2, .timeout = 1, .pending = 2};
    cr_assert_eq(rl_tally_failure_status(&early_auth, REDLOCK_ECONFLICT), REDLOCK_EAUTH);
    /* Ties go to "no quorum". */
    rl_tally tie = {.quorum = 3, .ok = 1, .error = 2, .timeout = 2};
    cr_assert_eq(rl_tally_failure_status(&tie, REDLOCK_ECONFLICT), REDLOCK_ENOQUORUM);
    /* Never sent for want of room: the masters are behind. */
    rl_tally behind = {.quorum = 3, .ok = 1, .unsent = 3, .timeout = 1};
    cr_assert_eq(rl_tally_failure_status(&behind, REDLOCK_ECONFLICT), REDLOCK_EOVERLOAD);
    rl_tally behind_and_down = {.quorum = 3, .unsent = 2, .not_connected = 2, .error = 1};
    cr_assert_eq(rl_tally_failure_status(&behind_and_down, REDLOCK_ECONFLICT), REDLOCK_ENOQUORUM);
    /* Unsent ones count as out of reach against errors. */
    rl_tally errors_and_unsent = {.quorum = 3, .error = 2, .unsent = 2, .ok = 1};
    cr_assert_eq(rl_tally_failure_status(&errors_and_unsent, REDLOCK_ECONFLICT),
                 REDLOCK_ENOQUORUM);
}

/* A round of five in every order of the same answers: F OK with a counter
 * in use, U OK without one, R held elsewhere, T timed out, N not connected
 * (known when the round starts, so never waited for). With fence, an
 * acquire's fenced round 1. Its status names what the masters said,
 * whichever came first. */
static int round_status(const char *answers, const unsigned order[5], bool fence)
{
    rl_tally t = {.quorum = 3, .pending = 5, .need_fence = fence};
    for (size_t i = 0; i < 5; i++) {
        if (answers[i] == 'N') {
            t.pending--;
            t.not_connected++;
        }
    }
    for (size_t i = 0; i < 5; i++) {
        rl_verdict v = rl_tally_verdict(&t);
        if (v == RL_QUORUM)
            return REDLOCK_OK;
        if (v == RL_NO_QUORUM)
            return rl_tally_failure_status(&t, REDLOCK_ECONFLICT);
        char answer = answers[order[i]];
        if (answer == 'N')
            continue;
        t.pending--;
        switch (answer) {
        case 'F': t.ok++; t.fenced_ok++; break;
        case 'U': t.ok++; break;
        case 'R': t.refused++; break;
        default: t.timeout++; break;
        }
    }
    rl_verdict v = rl_tally_verdict(&t);
    if (v == RL_QUORUM)
        return REDLOCK_OK;
    if (v == RL_NO_QUORUM)
        return rl_tally_failure_status(&t, REDLOCK_ECONFLICT);
    return -1000; /* never decided */
}

static void expect_the_same_in_any_order(const char *answers, bool fence, int expected)
{
    unsigned order[5] = {0, 1, 2, 3, 4};
    for (int perm = 0; perm < 120; perm++) {
        int status = round_status(answers, order, fence);
        cr_assert_eq(status, expected, "%s%s in order %u%u%u%u%u: %s, not %s", answers,
                     fence ? " (fenced)" : "", order[0], order[1], order[2], order[3], order[4],
                     redlock_strerror(status), redlock_strerror(expected));
        /* The next permutation, lexicographically. */
        int i = 3;
        while (i >= 0 && order[i] > order[i + 1])
            i--;
        if (i < 0)
            break;
        int j = 4;
        while (order[j] < order[i])
            j--;
        unsigned tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
        for (int a = i + 1, b = 4; a < b; a++, b--) {
            tmp = order[a];
            order[a] = order[b];
            order[b] = tmp;
        }
    }
}

Test(arithmetic, a_fenced_round_names_the_same_reason_in_any_order)
{
    static const struct {
        const char *answers;
        int status;
    } cases[] = {
        {"UURRR", REDLOCK_ECONFLICT}, /* held elsewhere: counters do not matter */
        {"FFRRR", REDLOCK_ECONFLICT},
        {"UUURR", REDLOCK_ENOFENCE},  /* a quorum said yes, none with a counter */
        {"FFURR", REDLOCK_ENOFENCE},
        {"UUUFF", REDLOCK_ENOFENCE},
        {"FFFUR", REDLOCK_OK},
        {"UTTTR", REDLOCK_ENOQUORUM},
        {"RRRNN", REDLOCK_ECONFLICT},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
        expect_the_same_in_any_order(cases[c].answers, true, cases[c].status);
}

Test(arithmetic, a_round_with_masters_down_names_the_same_reason_in_any_order)
{
    static const struct {
        const char *answers;
        int status;
    } cases[] = {
        /* Two refusals first leave one master that could still refuse:
         * waited for, not "no quorum" on the spot. */
        {"RRRNN", REDLOCK_ECONFLICT},
        {"RRRTN", REDLOCK_ECONFLICT},
        {"RRRRN", REDLOCK_ECONFLICT},
        {"RRUNN", REDLOCK_ENOQUORUM},
        {"RUTNN", REDLOCK_ENOQUORUM},
        {"UUURN", REDLOCK_OK},
        {"RRTTN", REDLOCK_ENOQUORUM},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
        expect_the_same_in_any_order(cases[c].answers, false, cases[c].status);
}

/* A round of five whose master 4 was not answering when asked (suspect),
 * the other four answering in the given order: F OK with a counter, O OK,
 * C OK on a master whose clock is proven fast, R held elsewhere, T timed
 * out. With wait, the round waits for master 4 to time out (after the
 * others) as it did before masters not answering were known; without, it
 * decides once the others have answered, or sooner if they allow. */
static int suspect_round_status(const char *answers, const unsigned order[4], bool wait)
{
    rl_tally t = {.quorum = 3, .pending = 5, .need_fence = strchr(answers, 'F') != NULL};
    if (!wait)
        t.pending_suspect = 1;
    for (size_t i = 0; i < 5; i++) {
        rl_verdict v = rl_tally_verdict(&t);
        if (v == RL_QUORUM)
            return REDLOCK_OK;
        if (v == RL_NO_QUORUM)
            return rl_tally_failure_status(&t, REDLOCK_ECONFLICT);
        t.pending--;
        switch (i < 4 ? answers[order[i]] : 'T') {
        case 'F': t.ok++; t.fenced_ok++; break;
        case 'O': t.ok++; break;
        case 'C': t.clock++; break;
        case 'R': t.refused++; break;
        case 'E': t.error++; break;
        case 'A': t.auth_failed++; break;
        default:
            t.timeout++;
            if (i == 4 && !wait)
                t.pending_suspect--;
            break;
        }
    }
    rl_verdict v = rl_tally_verdict(&t);
    return v == RL_QUORUM ? REDLOCK_OK : rl_tally_failure_status(&t, REDLOCK_ECONFLICT);
}

Test(arithmetic, a_round_decided_without_a_master_not_answering_keeps_the_status_of_waiting)
{
    static const char *const cases[] = {"OORR", "ORRR", "OOOR", "OOCR", "OCCR", "OCRR",
                                        "OOTR", "FFOR", "FFFR", "FORR", "OOCC", "RRRR",
                                        "OOEA", "OEEA", "OEAT", "OOEE", "FOOR", "FFOC"};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        /* Every order of the four answers (4! = 24, by index). */
        for (unsigned perm = 0; perm < 24; perm++) {
            unsigned order[4];
            unsigned left[4] = {0, 1, 2, 3};
            unsigned k = perm;
            for (unsigned i = 0, n = 4; i < 4; i++, n--) {
                unsigned f = 1;
                for (unsigned j = 2; j < n; j++)
                    f *= j;
                unsigned pick = k / f;
                k %= f;
                order[i] = left[pick];
                for (unsigned j = pick; j + 1 < n; j++)
                    left[j] = left[j + 1];
            }
            int waited = suspect_round_status(cases[c], order, true);
            int early = suspect_round_status(cases[c], order, false);
            cr_assert_eq(early, waited, "%s in order %u%u%u%u: %s, waiting %s", cases[c],
                         order[0], order[1], order[2], order[3], redlock_strerror(early),
                         redlock_strerror(waited));
        }
    }
    /* Two said yes, two refused: only the silent master could have made a
     * quorum. Decided at once, for want of masters, not a conflict. */
    rl_tally t = {.quorum = 3, .ok = 2, .refused = 2, .pending = 1, .pending_suspect = 1};
    cr_assert_eq(rl_tally_verdict(&t), RL_NO_QUORUM);
    cr_assert_eq(rl_tally_failure_status(&t, REDLOCK_ECONFLICT), REDLOCK_ENOQUORUM);
    /* Its OK, in time, still counts. */
    rl_tally u = {.quorum = 3, .ok = 2, .pending = 3, .pending_suspect = 1};
    cr_assert_eq(rl_tally_verdict(&u), RL_UNDECIDED);
    u.ok++;
    u.pending--;
    u.pending_suspect--;
    cr_assert_eq(rl_tally_verdict(&u), RL_QUORUM);
}

/* A round of five whose slots were sent at sent[i] (-1: not OK). */
static int64_t quorum_sent(const int64_t sent[5])
{
    rl_round *round = calloc(1, sizeof(rl_round) + 5 * sizeof(rl_slot));
    cr_assert_not_null(round);
    round->n = 5;
    round->t0_us = 100;
    round->tally.quorum = 3;
    for (size_t i = 0; i < 5; i++) {
        rl_slot *slot = &round->slots[i];
        slot->sent_us = sent[i];
        slot->counted = true;
        slot->state = RL_SLOT_DONE;
        slot->outcome = sent[i] >= 0 ? REDLOCK_MASTER_OK : REDLOCK_MASTER_TIMEOUT;
    }
    int64_t from = rl_round_quorum_sent_us(round);
    free(round);
    return from;
}

Test(arithmetic, a_quorum_lives_from_the_quorum_th_latest_send_of_its_oks)
{
    /* Three OK of five, quorum three: the earliest send of them counts. */
    cr_assert_eq(quorum_sent((const int64_t[]){400, -1, 100, 300, -1}), 100);
    /* Five OK: any three live until the third latest send plus the TTL. */
    cr_assert_eq(quorum_sent((const int64_t[]){500, 100, 400, 200, 300}), 300);
    /* Fewer than a quorum: from the round's start. */
    cr_assert_eq(quorum_sent((const int64_t[]){900, 800, -1, -1, -1}), 100);
}
