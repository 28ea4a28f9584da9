/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A counting semaphore over a quorum: at most K holders of a resource at
 * once (docs/design.md, "Semaphores"): the specification the code is to
 * follow, and the obvious design it must not.
 *
 * The obvious design (-DCOUNTING): each master admits a holder while it
 * has fewer than K, and a holder needs a majority of the masters. Unsafe:
 * K + 1 holders need (K + 1) * Q admissions, which N masters of K each
 * can give whenever (K + 1) * Q <= K * N (here N = 3, K = 2, Q = 2: 6 of
 * 6), and spin finds three holders. It is safe only with a per-holder
 * quorum Q such that (K + 1) * Q > K * N (-DCOUNTING -DQ=3: here every
 * master, so a single master down stops it: no fault tolerance).
 *
 * The design checked (the default): K slots, each an ordinary Redlock of
 * its own key (resource, then the slot's number). A client tries the
 * slots in turn, each as the lock is taken (a quorum of masters where the
 * slot's key was free), and holds the first it wins; having won none, it
 * deletes what it set and fails. Each slot is a lock, so it has at most
 * one holder (the lock's models), and K slots at most K holders, with
 * the lock's availability: any minority of masters down.
 *
 * Fault model, as shared.pml's: requests lost; a holder's validity runs
 * out at any step and its keys go; a master restarts empty (CRASHES
 * times) and counts for nobody until every client in force then is done;
 * a failed try's keys go at once. A reply lost leaves a key set that
 * counts for nobody, which only refuses others until it goes: a run with
 * it is one the others see refused more; -DREPLY_LOSS adds it (90 million
 * states, minutes: by hand, not in CI).
 *
 * Modelled: 3 masters, K = 2, C = 3 clients (K + 1: a violation needs
 * them all), ATT attempts each.
 *
 * Checked (scripts/check-model.sh), as an assertion: never more than K
 * holders within their validity. Not vacuous: -DWITNESS=1, K holders at
 * once, is reached. Wrong variants, each caught: -DCOUNTING (the obvious
 * design); -DQUORUM=1; -DCOUNT_RESTARTED (a restarted master counts at
 * once). -DCOUNTING -DQ=3 passes.
 */

#define M 3
#define K 2
#define C 3
#ifndef QUORUM
#define QUORUM 2
#endif
#ifndef Q
#define Q QUORUM /* -DCOUNTING: the per-holder quorum */
#endif
#ifndef ATT
#define ATT 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef WITNESS
#define WITNESS 0
#endif
#define NONE 255
#define BIT(i) (1 << (i))
#define COUNT3(x) (((x) & 1) + (((x) >> 1) & 1) + (((x) >> 2) & 1)) /* bits of 3 */

#ifdef COUNTING
byte members[M];  /* the holders admitted on master m (bits) */
#else
byte slot[M * K]; /* the holder of slot s's key on master m: slot[m * K + s], or NONE */
#endif
byte excluded[M]; /* clients in force when master m last restarted (bits) */
byte votes[C];    /* the masters whose admission of c's current try counts (bits) */
byte live;        /* clients in an attempt or a hold (bits) */
byte holding;
byte crashes;
hidden byte i;

/* Client c's keys (or memberships) go everywhere; it is no longer in
 * force. */
inline gone(c)
{
    for (i : 0 .. M - 1) {
#ifdef COUNTING
        members[i] = members[i] & ~BIT(c);
#else
        if
        :: slot[i * K] == c -> slot[i * K] = NONE
        :: else -> skip
        fi;
        if
        :: slot[i * K + 1] == c -> slot[i * K + 1] = NONE
        :: else -> skip
        fi;
#endif
        excluded[i] = excluded[i] & ~BIT(c)
    }
    i = 0;
    live = live & ~BIT(c);
    votes[c] = 0
}

/* Master m's answer to client c trying slot s (COUNTING: any place). */
inline admit(c, s, m, admitted)
{
    admitted = false;
#ifdef COUNTING
    if
    :: COUNT3(members[m]) < K -> members[m] = members[m] | BIT(c); admitted = true
    :: else -> skip
    fi
#else
    if
    :: slot[m * K + s] == NONE -> slot[m * K + s] = c; admitted = true
    :: else -> skip
    fi
#endif
}

proctype client(byte c)
{
    byte m, n, s;
    bool admitted;

attempt:
    if
    :: n == ATT -> goto done
    :: else -> n++
    fi;
    live = live | BIT(c);
    s = 0;
try:
    votes[c] = 0;
    for (m : 0 .. M - 1) {
        atomic {
            if
            :: skip /* the request is lost */
            :: admit(c, s, m, admitted);
               if
               :: admitted && excluded[m] == 0 -> votes[c] = votes[c] | BIT(m)
               :: else -> skip /* refused, or excluded */
#ifdef REPLY_LOSS
               :: admitted -> skip /* the reply lost */
#endif
               fi;
               admitted = false
            fi
        }
    }
    m = 0;
    if
#ifdef COUNTING
    :: COUNT3(votes[c]) >= Q ->
#else
    :: COUNT3(votes[c]) >= QUORUM ->
#endif
        atomic {
            holding++;
            assert(holding <= K);
            assert(!(WITNESS == 1 && holding == K))
        }
        /* Released, or its validity ran out: its keys go. */
        atomic {
            holding--;
            gone(c)
        }
        goto attempt
#ifndef COUNTING
    :: COUNT3(votes[c]) < QUORUM && s + 1 < K ->
        /* Not won: what it set of this slot goes (released, or
         * expired), and the next slot is tried. */
        atomic {
            for (i : 0 .. M - 1) {
                if
                :: slot[i * K + s] == c -> slot[i * K + s] = NONE
                :: else -> skip
                fi
            }
            i = 0;
            s++
        }
        goto try
#endif
    :: else ->
        atomic { gone(c) }
        goto attempt
    fi;
done:
    skip
}

proctype restarts()
{
    byte m, c;
    do
    :: crashes < CRASHES ->
        atomic {
            if
            :: m = 0
            :: m = 1
            :: m = 2
            fi;
#ifdef COUNTING
            members[m] = 0;
#else
            slot[m * K] = NONE;
            slot[m * K + 1] = NONE;
#endif
#ifndef COUNT_RESTARTED
            excluded[m] = live;
#endif
            for (c : 0 .. C - 1) { votes[c] = votes[c] & ~BIT(m) }
            c = 0;
            m = 0;
            crashes++
        }
    :: else -> break
    od
}

init
{
    atomic {
#ifndef COUNTING
        for (i : 0 .. M * K - 1) { slot[i] = NONE }
        i = 0;
#endif
        run client(0);
        run client(1);
        run client(2);
        run restarts()
    }
}
