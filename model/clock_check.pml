/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Masters whose expiry clocks run fast or jump, and the client that checks
 * them (docs/safety.md, "Masters' clocks"): the specification the code
 * follows.
 *
 * M masters, one resource, C clients. A client's attempt sets the key on
 * each master where it is free, in any order, interleaved with everyone
 * else; it holds the lock when a quorum of the configured masters (never
 * fewer: exclusions do not shrink it) accepted, counting only masters it
 * has not proven fast. Otherwise it deletes what it set and tries again.
 *
 * An honest master's key outlives its holder's validity (the validity
 * formula's assumption): here it goes only by its holder's delete. Two
 * ways a master breaks that assumption:
 *  - fast (the default): its clock runs fast from the start, so a key
 *    there may vanish at any time after it was set. Every client proves
 *    it fast in its warm-up, before its first attempt (at x1.5 and above
 *    the first sample does; the warm-up waits for it).
 *  - stepped (-DSTEP): at one instant its clock jumps forward past every
 *    key's life: its keys vanish at once; each client proves it fast at
 *    its next sample, some time later.
 * When a holder proves a master fast, it counts again the masters it
 * holds the lock on without the fast ones; under the quorum, the lock is
 * lost at once (it stops acting, then deletes its keys).
 *
 * Checked (scripts/check-model.sh): no two clients in their critical
 * section at once (assertion), and no client left blocked.
 *  - a fast minority, one of three and (-DM=5 -DFAST=2) two of five:
 *    verified; -DWITNESS_HELD shows the lock is still taken.
 *  - -DCOUNT_FAST (an OK from a master proven fast counts) and
 *    -DNO_WARMUP (a client may attempt before it has sampled the masters)
 *    are caught.
 *  - -DSTEP: caught. This is the residual risk: a step on a master of a
 *    holder set of exactly a quorum, between two samples, lets another
 *    client take that master before anyone has proven the step.
 *  - -DSTEP -DHOLD_ALL (the lock held on quorum + 1 masters, here all
 *    three): verified: a single step cannot break it; -DWITNESS_KEPT
 *    shows the holder proving the step and keeping its lock.
 */

#ifndef M
#define M 3
#endif
#define C 2
#ifndef QUORUM
#define QUORUM (M / 2 + 1)
#endif
#ifndef FAST
#define FAST 1      /* masters 0 .. FAST - 1 run fast (-DSTEP: master 0 steps) */
#endif
#define NONE 255

byte key[M];        /* the holder of the resource's key on master m, or NONE */
byte in_cs;         /* clients in their critical section */
bool known[C * M];  /* client c has proven master m fast: known[c * M + m] */
bool holds[C * M];  /* client c's attempt set its key on master m */
bool acting[C];     /* client c is in its critical section */
bool stepped;       /* -DSTEP: the master's clock has jumped */
hidden byte i;

/* Masters client c holds the lock on that it has not proven fast, into n. */
inline count_trusted(c, n)
{
    atomic {
        n = 0;
        for (i : 0 .. M - 1) {
            if
#ifdef COUNT_FAST
            :: holds[c * M + i] -> n++
#else
            :: holds[c * M + i] && !known[c * M + i] -> n++
#endif
            :: else -> skip
            fi
        }
        i = 0
    }
}

/* Client c proves master f fast; a holder left under the quorum by it
 * stops acting at once (its lost callback). */
inline prove_fast(c, f)
{
    atomic {
        known[c * M + f] = true;
        if
        :: acting[c] ->
            count_trusted(c, n);
            if
            :: n < QUORUM -> acting[c] = false; in_cs--
#ifdef WITNESS_KEPT
            :: else -> assert(false) /* a holder kept the lock past a proven fault */
#else
            :: else -> skip
#endif
            fi
        :: else -> skip
        fi
    }
}

/* The fast masters' clocks: a key there may vanish at any time. */
proctype fast_clock()
{
#ifndef STEP
end:
    do /* FAST is 1 or 2 */
    :: atomic { key[0] != NONE -> key[0] = NONE }
    :: atomic { FAST > 1 && key[1] != NONE -> key[1] = NONE }
    od
#else
    /* One jump, at any time: every key there lapses at that instant. */
    atomic { key[0] = NONE; stepped = true }
#endif
}

/* Client c's clock samples: each proves a faulty master fast at some time
 * after the fault shows (with -DNO_WARMUP a fast master too, not known
 * before the first attempt). */
proctype sampler(byte c)
{
    byte n, f;
#ifdef STEP
    stepped;
    prove_fast(c, 0)
#else
    for (f : 0 .. FAST - 1) { prove_fast(c, f) }
#endif
}

proctype client(byte c)
{
    byte m, n;
#if !defined(STEP) && !defined(NO_WARMUP)
    for (m : 0 .. FAST - 1) { known[c * M + m] = true } /* the warm-up's samples */
    m = 0;
#endif
attempt:
    for (m : 0 .. M - 1) {
        atomic {
            if
            :: key[m] == NONE -> key[m] = c; holds[c * M + m] = true
            :: else -> skip
            fi
        }
    }
    m = 0;
    atomic {
        count_trusted(c, n);
#ifdef HOLD_ALL
        if
        :: n == M -> acting[c] = true; in_cs++; assert(in_cs == 1)
        :: else -> skip
        fi
#else
        if
        :: n >= QUORUM -> acting[c] = true; in_cs++; assert(in_cs == 1)
        :: else -> skip
        fi
#endif
#ifdef WITNESS_HELD
        assert(!acting[c]) /* a client got the lock */
#endif
    }
    if
    :: acting[c] ->
        /* The critical section, until it ends or the lock is lost. */
        atomic {
            if
            :: acting[c] -> acting[c] = false; in_cs--
            :: else -> skip
            fi
        }
        for (m : 0 .. M - 1) {
            atomic {
                if
                :: key[m] == c -> key[m] = NONE
                :: else -> skip
                fi;
                holds[c * M + m] = false
            }
        }
        m = 0
    :: else ->
        /* Not acquired: delete what this attempt set, and try again. */
        for (m : 0 .. M - 1) {
            atomic {
                if
                :: key[m] == c -> key[m] = NONE
                :: else -> skip
                fi;
                holds[c * M + m] = false
            }
        }
        m = 0;
        goto attempt
    fi
}

init
{
    byte j;
    for (j : 0 .. M - 1) { key[j] = NONE }
    atomic {
        run fast_clock();
        for (j : 0 .. C - 1) {
#if defined(STEP) || defined(NO_WARMUP)
            run sampler(j);
#endif
            run client(j)
        }
    }
}
