/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fair lock over a quorum: waiters served in the order they queued
 * (docs/design.md, "Fair order"): the specification the code is to follow.
 *
 * Queuing takes two rounds, as a fenced acquire does (fencing.pml):
 *  1. the ticket: INCR of the resource's queue counter on every master;
 *     with a quorum of answers, the ticket T is the largest answer;
 *  2. the registration: on every master, T into the resource's queue (a
 *     sorted set, with the ticket's expiry) and the counter raised to T if
 *     below. Registered on a quorum, the waiter is queued.
 * An acquire is the lock's, but a master admits a waiter (SET NX) only
 * when no live ticket lower than its own is in its queue there. A waiter
 * gone (its process died) stops refreshing its ticket, which expires, so
 * it never blocks the queue for longer than a ticket's life.
 *
 * Why no waiter is overtaken while it keeps its ticket: if A was queued
 * before B asked for its ticket, B's ticket round meets one of the masters
 * where A raised the counter to T_A, so T_B > T_A; and B's acquire needs a
 * quorum, which meets one where A's ticket is registered and refuses B.
 * Without the counter raised in round 2 (-DNO_RAISE), T_A, the largest of
 * A's answers, may exceed what a master B asks says, and B overtakes A.
 *
 * Fault model, as shared.pml's: requests lost (LOSSES in all; a reply
 * lost too with -DREPLY_LOSS, which leaves what it did counted for
 * nobody: only others refused more, or a counter higher, which the
 * counters' arbitrary start covers); a queued
 * waiter may die between its attempts (its ticket expires: its entries
 * go; one paused past its ticket's life queues again, a new waiter here);
 * the lock's holder
 * releases, or its validity runs out, and its key goes; a master restarts
 * empty (CRASHES times: counter, queue and key gone) and counts for nobody
 * until every client in force then is done (the restart rule).
 *
 * Modelled: 3 masters whose counters start anywhere in 0..1 (tickets
 * long gone), 2 waiters (A = 0, B = 1), ATT acquire attempts each once
 * queued (1; 2 exceeds 2 GB of states); a waiter that cannot queue gives
 * up. Its ticket is gone with it, as is the holder's once done.
 *
 * Checked (scripts/check-model.sh), as assertions: never two holders;
 * never B granted while A, queued before B asked for its ticket, still
 * waits with its ticket (A overtaken). Not vacuous: -DWITNESS=1, B queued
 * after A and granted after A, is reached. Wrong variants, each caught:
 * -DNO_RAISE (the counter not raised to the ticket); -DIGNORE_QUEUE (a
 * master admits whoever asks first); -DQUORUM=1; -DCOUNT_RESTARTED (a
 * restarted master counts at once: its counter starts again at 0).
 */

#define M 3
#define W 2
#ifndef QUORUM
#define QUORUM 2
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
#ifndef LOSSES
#define LOSSES 2 /* requests lost, in all */
#endif
#define NONE 255
#define BIT(i) (1 << (i))
#define COUNT3(x) (((x) & 1) + (((x) >> 1) & 1) + (((x) >> 2) & 1)) /* bits of M = 3 */
#define TK(w, m) tk[(w) * M + (m)]

byte counter[M];   /* the queue counter on master m */
byte tk[W * M];    /* waiter w's ticket in master m's queue, 0: none */
byte key[M];       /* the lock's holder on master m, or NONE */
byte excluded[M];  /* waiters in force when master m last restarted (bits) */
byte votes[W];     /* the masters whose answer counts for w's current round (bits) */
byte live;         /* waiters in force (bits) */
bool queued[W];    /* w's ticket registered on a quorum, w still waiting */
bool before[W];    /* A (0) was queued before B (1) asked for its ticket: [1] */
bool granted[W];
byte holders;
byte crashes;
byte lost;
hidden byte i;

/* Waiter w's ticket, key and counts go everywhere: it died, or is done. */
inline gone(w)
{
    for (i : 0 .. M - 1) {
        TK(w, i) = 0;
        if
        :: key[i] == w -> key[i] = NONE
        :: else -> skip
        fi;
        excluded[i] = excluded[i] & ~BIT(w)
    }
    i = 0;
    live = live & ~BIT(w);
    votes[w] = 0;
    queued[w] = false
}

/* An answer from master m counts for w, unless m is excluded (or, with
 * REPLY_LOSS, the reply is lost). */
inline count(w, m)
{
    if
    :: excluded[m] == 0 -> votes[w] = votes[w] | BIT(m)
    :: else -> skip
#ifdef REPLY_LOSS
    :: true -> skip /* the reply lost */
#endif
    fi
}

/* No live ticket lower than t in master m's queue but w's own. */
inline first_in(w, m, t, ok)
{
    ok = true;
#ifndef IGNORE_QUEUE
    for (i : 0 .. W - 1) {
        if
        :: i != w && TK(i, m) != 0 && TK(i, m) < t -> ok = false
        :: else -> skip
        fi
    }
    i = 0
#endif
}

proctype waiter(byte w)
{
    byte m, n, t;
    bool ok;

    atomic {
        live = live | BIT(w);
        /* B asks for its ticket: was A queued already? */
        if
        :: w == 1 && queued[0] -> before[1] = true
        :: else -> skip
        fi
    }
    /* Round 1: the ticket. */
    votes[w] = 0;
    for (m : 0 .. M - 1) {
        atomic {
            if
            :: lost < LOSSES -> lost++ /* the request is lost */
            :: counter[m]++;
               if
               :: counter[m] > t -> t = counter[m]
               :: else -> skip
               fi;
               count(w, m)
            fi
        }
    }
    m = 0;
    if
    :: COUNT3(votes[w]) < QUORUM -> goto out
    :: else -> skip
    fi;
    /* Round 2: the registration. */
    votes[w] = 0;
    for (m : 0 .. M - 1) {
        atomic {
            if
            :: lost < LOSSES -> lost++ /* the request is lost */
            :: TK(w, m) = t;
#ifndef NO_RAISE
               if
               :: counter[m] < t -> counter[m] = t
               :: else -> skip
               fi;
#endif
               count(w, m)
            fi
        }
    }
    m = 0;
    if
    :: COUNT3(votes[w]) < QUORUM -> goto out
    :: else -> queued[w] = true
    fi;
    /* Acquire attempts, in turn. */
attempt:
    if
    :: n == ATT -> goto out
    :: skip -> goto out /* it dies: its ticket expires */
    :: n < ATT -> n++
    fi;
    votes[w] = 0;
    for (m : 0 .. M - 1) {
        atomic {
            if
            :: lost < LOSSES -> lost++ /* the request is lost */
            :: first_in(w, m, t, ok);
               if
               :: ok && key[m] == NONE -> key[m] = w; count(w, m)
               :: else -> skip
               fi;
               ok = false
            fi
        }
    }
    m = 0;
    if
    :: COUNT3(votes[w]) >= QUORUM ->
        atomic {
            holders++;
            assert(holders == 1);
            /* B granted while A, queued first, still waits: overtaken. */
            assert(!(w == 1 && before[1] && queued[0] && !granted[0]));
            granted[w] = true;
            assert(!(WITNESS == 1 && w == 1 && before[1] && granted[0]))
        }
        atomic {
            holders--;
            gone(w) /* released (or its validity ran out): done */
        }
        goto done
    :: else ->
        atomic {
            for (m : 0 .. M - 1) {
                if
                :: key[m] == w -> key[m] = NONE /* its clean-up, or expiry */
                :: else -> skip
                fi
            }
            m = 0
        }
        goto attempt
    fi;
out:
    atomic { gone(w) } /* gave up: its ticket goes */
done:
    skip
}

proctype restarts()
{
    byte m, w;
    do
    :: crashes < CRASHES ->
        atomic {
            if
            :: m = 0
            :: m = 1
            :: m = 2
            fi;
            counter[m] = 0;
            key[m] = NONE;
            for (w : 0 .. W - 1) {
                TK(w, m) = 0;
                votes[w] = votes[w] & ~BIT(m)
            }
            w = 0;
#ifndef COUNT_RESTARTED
            excluded[m] = live;
#endif
            m = 0;
            crashes++
        }
    :: else -> break
    od
}

init
{
    atomic {
        /* Earlier tickets, long gone, left the counters anywhere. */
        for (i : 0 .. M - 1) {
            key[i] = NONE;
            if
            :: counter[i] = 0
            :: counter[i] = 1
            fi
        }
        i = 0;
        run waiter(0);
        run waiter(1);
        run restarts()
    }
}
