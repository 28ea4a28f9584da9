/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Acquiring several resources at once, all or nothing (docs/design.md,
 * "Several resources"): the specification the code follows.
 *
 * M masters, K resources, C clients, each wanting a set of resources. An
 * attempt runs one script per master, in any order, interleaved with
 * everyone else: if every key of the set is free there, the script sets
 * them all and the master votes yes; otherwise it sets nothing and votes
 * no. A client holds its whole set when a quorum voted yes; otherwise it
 * deletes what it set (its own value only, key by key) and tries again.
 * Keys never expire here, so the only way a key goes is its holder's
 * delete.
 *
 * Checked (scripts/check-model.sh):
 *  - safety: no resource is held by two clients at once (assertion), with
 *    the same set asked in two orders ({a,b} and {b,a}) and a third
 *    client asking for one of them ({b});
 *  - no deadlock: no client is left blocked (no invalid end state).
 * Each check is shown able to fail: -DQUORUM=1 (a minority suffices)
 * breaks the assertion; -DKEY_BY_KEY, the tempting way with single-key
 * locks (take each key on each master in the caller's order, waiting for
 * it when held, as a multi-lock built on single locks does), is caught by
 * spin as two clients blocked on each other.
 */

#define M 3
#define K 2
#define C 3
#ifndef QUORUM
#define QUORUM 2 /* -DQUORUM=1, a minority, is caught by the assertion */
#endif
#define NONE 255

byte key[M * K];   /* holder of resource k on master m: key[m * K + k], or NONE */
byte held[K];      /* clients in their critical section holding resource k */
/* The resources client c asks for, in its order: order[c * K + i], NONE
 * past the last. Client 0 asks for {0, 1}, client 1 for {1, 0} (the same
 * set, the other order), client 2 for {1} alone (an overlap). */
byte order[C * K];
hidden byte i;     /* a loop's index, not part of the state */

/* Delete client c's keys on master m: compare-and-delete, key by key. */
inline release_on(c, m)
{
    atomic {
        for (i : 0 .. K - 1) {
            if
            :: key[m * K + i] == c -> key[m * K + i] = NONE
            :: else -> skip
            fi
        }
        i = 0
    }
}

proctype client(byte c)
{
    byte m, yes, k, j;
    bool free;

attempt:
    yes = 0;
    for (m : 0 .. M - 1) {
#ifndef KEY_BY_KEY
        /* The script: every key of the set free, then all set; else none. */
        atomic {
            free = true;
            for (i : 0 .. K - 1) {
                k = order[c * K + i];
                if
                :: k != NONE && key[m * K + k] != NONE -> free = false
                :: else -> skip
                fi
            }
            if
            :: free ->
                for (i : 0 .. K - 1) {
                    k = order[c * K + i];
                    if
                    :: k != NONE -> key[m * K + k] = c
                    :: else -> skip
                    fi
                }
                yes++
            :: else -> skip
            fi;
            i = 0; k = 0; free = false
        }
#else
        /* One key at a time, in the caller's order, each waited for. */
        for (j : 0 .. K - 1) {
            k = order[c * K + j];
            if
            :: k != NONE -> atomic { key[m * K + k] == NONE -> key[m * K + k] = c }
            :: else -> skip
            fi
        }
        j = 0;
        yes++;
#endif
    }
    m = 0;
    if
    :: yes >= QUORUM ->
        atomic {
            for (i : 0 .. K - 1) {
                k = order[c * K + i];
                if
                :: k != NONE -> held[k]++; assert(held[k] == 1)
                :: else -> skip
                fi
            }
            i = 0
        }
        atomic {
            for (i : 0 .. K - 1) {
                k = order[c * K + i];
                if
                :: k != NONE -> held[k]--
                :: else -> skip
                fi
            }
            i = 0; k = 0
        }
        for (m : 0 .. M - 1) { release_on(c, m) }
        m = 0;
        goto done
    :: else
    fi;
    /* Not acquired: delete what this attempt set, and try again. */
    for (m : 0 .. M - 1) { release_on(c, m) }
    m = 0;
    goto attempt;

done:
    skip
}

init
{
    byte j;
    for (j : 0 .. M * K - 1) { key[j] = NONE }
    order[0] = 0; order[1] = 1;
    order[2] = 1; order[3] = 0;
    order[4] = 1; order[5] = NONE;
    atomic {
        for (j : 0 .. C - 1) { run client(j) }
    }
}
