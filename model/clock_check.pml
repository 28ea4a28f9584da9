/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Masters whose expiry clocks run fast or jump, and the client that checks
 * them (docs/safety.md, "Masters' clocks"): the specification the code
 * follows.
 *
 * M masters, one resource, C clients. A client's attempt sets the key on
 * each master where it is free, in any order, interleaved with everyone
 * else; each master's OK is counted as it is heard (at once; the last
 * master's may come late, after the decision). The attempt holds the lock
 * when a quorum of the configured masters (never fewer: exclusions do not
 * shrink it) said OK, counting only masters the client has not proven
 * fast by the moment of the decision, whatever verdict came after an OK
 * was counted. Otherwise it deletes what it set and tries again. A holder may extend its lock once:
 * every master still holding its key extends it before anything sent after
 * (a release), the OKs are heard one by one, and the extension is decided
 * by the same count, on a lock still held only: one lost meanwhile stays
 * lost. Extended, the lock is held by the extension's OKs.
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
 *    its next sample, some time later. -DSTEP_SEEN: client 0's next sample
 *    comes at that instant, the other's later, so a verdict may arrive
 *    between an OK's count and its round's decision.
 * When a holder proves a master fast, it counts again the masters it
 * holds the lock on without the fast ones; under the quorum, the lock is
 * lost at once (it stops acting and releases its keys).
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
 *  - -DSTEP_SEEN: verified: the client that proved the step first never
 *    counts that master again, nor acts on a lock it lost.
 *    -DCOUNT_AT_REPLY (an OK counted before a verdict still counts at the
 *    decision) and -DEXTEND_LOST_LOCK (an extension decided on a lock
 *    already lost reports it extended, and its holder acts on) are caught.
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
#ifdef STEP_SEEN
#define STEP
#endif
#ifdef HOLD_ALL
#define NEED M      /* OKs an attempt needs */
#else
#define NEED QUORUM
#endif
#define NONE 255

byte key[M];        /* the holder of the resource's key on master m, or NONE */
byte in_cs;         /* clients in their critical section */
bool known[C * M];  /* client c has proven master m fast: known[c * M + m] */
bool holds[C * M];  /* the lock's holders: master m's OK to client c's attempt
                       (heard in time or late), or to its extension */
bool late[C * M];   /* client c's attempt set its key on m, the OK not heard yet */
bool ok[C * M];     /* the OKs of client c's round (attempt or extension) */
bool counted[C * M]; /* -DCOUNT_AT_REPLY: ok, from a master trusted when heard */
bool acting[C];     /* client c is in its critical section */
bool stepped;       /* -DSTEP: the master's clock has jumped */
hidden byte i;

/* The lock's holders client c has not proven fast, into n: what a verdict
 * weighs a held lock by. */
inline count_holders(c, n)
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

/* The OKs client c's round is decided by, into n: from masters it has not
 * proven fast at this moment (-DCOUNT_AT_REPLY: when each OK was heard). */
inline count_decision(c, n)
{
    atomic {
        n = 0;
        for (i : 0 .. M - 1) {
            if
#if defined(COUNT_FAST)
            :: ok[c * M + i] -> n++
#elif defined(COUNT_AT_REPLY)
            :: counted[c * M + i] -> n++
#else
            :: ok[c * M + i] && !known[c * M + i] -> n++
#endif
            :: else -> skip
            fi
        }
        i = 0
    }
}

/* Client c hears master m's OK (its round's count). */
inline hear(c, m)
{
    ok[c * M + m] = true;
    counted[c * M + m] = !known[c * M + m]
}

/* Client c releases its keys: deleted on every master. */
inline release(c)
{
    atomic {
        for (i : 0 .. M - 1) {
            if
            :: key[i] == c -> key[i] = NONE
            :: else -> skip
            fi
        }
        i = 0
    }
}

/* Client c proves master f fast; a holder left under the quorum by it
 * stops acting at once (its lost callback) and releases its keys. */
inline prove_fast(c, f)
{
    atomic {
        known[c * M + f] = true;
        if
        :: acting[c] ->
            count_holders(c, n);
            if
            :: n < QUORUM -> acting[c] = false; in_cs--; release(c)
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
    byte n;
    atomic {
        key[0] = NONE;
        stepped = true;
#ifdef STEP_SEEN
        prove_fast(0, 0) /* client 0's sample right behind the step */
#endif
    }
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

/* Client c forgets its round: its keys deleted, nothing held or heard. */
inline clean_up(c)
{
    for (m : 0 .. M - 1) {
        atomic {
            if
            :: key[m] == c -> key[m] = NONE
            :: else -> skip
            fi;
            holds[c * M + m] = false;
            late[c * M + m] = false;
            ok[c * M + m] = false;
            counted[c * M + m] = false
        }
    }
    m = 0
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
            :: key[m] == NONE ->
                key[m] = c;
                if
                :: holds[c * M + m] = true; hear(c, m)
                :: m == M - 1 -> late[c * M + m] = true /* heard after the decision */
                fi
            :: else -> skip
            fi
        }
    }
    m = 0;
    /* The decision: a verdict may have come since an OK was counted. */
    atomic {
        count_decision(c, n);
        if
        :: n >= NEED -> acting[c] = true; in_cs++; assert(in_cs == 1)
        :: else -> skip
        fi
#ifdef WITNESS_HELD
        assert(!acting[c]) /* a client got the lock */
#endif
    }
    if
    :: acting[c] ->
        /* The critical section, until it ends or the lock is lost; or an
         * extension first. */
        if
        :: skip
        :: atomic {
               /* Every master holding our key extends it, ahead of
                * anything sent after (the release of a loss). */
               for (m : 0 .. M - 1) {
                   ok[c * M + m] = false;
                   counted[c * M + m] = false;
                   if
                   :: key[m] == c -> ok[c * M + m] = true
                   :: else -> skip
                   fi
               }
               m = 0
           }
           for (m : 0 .. M - 1) {
               atomic {
                   /* The attempt's late OK comes first on the connection. */
                   if
                   :: late[c * M + m] -> holds[c * M + m] = true; late[c * M + m] = false
                   :: else -> skip
                   fi;
                   if
                   :: ok[c * M + m] -> counted[c * M + m] = !known[c * M + m]
                   :: else -> skip
                   fi
               }
           }
           m = 0;
           atomic {
               count_decision(c, n);
               if
#ifdef EXTEND_LOST_LOCK
               :: n >= QUORUM ->
#else
               :: n >= QUORUM && acting[c] ->
#endif
                   for (m : 0 .. M - 1) { holds[c * M + m] = ok[c * M + m] }
                   m = 0;
                   if
                   :: !acting[c] -> acting[c] = true; in_cs++; assert(in_cs == 1) /* acts on */
                   :: else -> skip
                   fi
               :: else -> /* not extended: the holder stops */
                   if
                   :: acting[c] -> acting[c] = false; in_cs--
                   :: else -> skip
                   fi
               fi
           }
        fi;
        atomic {
            if
            :: acting[c] -> acting[c] = false; in_cs--
            :: else -> skip
            fi
        }
        clean_up(c)
    :: else ->
        /* Not acquired: delete what this attempt set, and try again. */
        clean_up(c);
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
