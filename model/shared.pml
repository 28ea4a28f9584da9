/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared (read) and exclusive (write) holds of one resource over a quorum
 * (docs/design.md, "Shared locks"): the specification the code is to
 * follow.
 *
 * Each master keeps, for the resource, at most one writer's entry, a set
 * of readers' entries, and a waiting writer's mark. One script per master
 * and request decides, atomically there:
 *  - a writer is admitted when the master has no writer and no reader; when
 *    refused, it leaves its mark (writer preference), unless another
 *    writer's is there;
 *  - a reader is admitted when the master has no writer and no writer's
 *    mark.
 * A hold is granted when a quorum of the masters admitted it, as the
 * lock's. Two quorums share a master, which never admits a writer beside
 * anyone: so never a writer beside another holder. A writer's mark keeps
 * new readers out of a quorum while the writer waits, so a stream of
 * readers cannot starve it (the code bounds the mark's life by the
 * writer's wait).
 *
 * Fault model, as restart.pml's: each request reaches its master once or
 * is lost, and its reply may be lost; a holder's validity may run out at
 * any step (paused), and then its entries go (a key that lingers only
 * refuses, the same as requests lost); a master may restart empty
 * (CRASHES times), and then counts for nobody until every round and hold
 * in force when it restarted is over (the restart rule, restart.pml, whose
 * abstraction of MAXTTL this is). A failed attempt's entries go at once
 * (released, or expired: the same here).
 *
 * Modelled: 3 masters; client 0 a writer, client 1 a reader
 * (-DTWO_WRITERS: a writer too; -DTWO_READERS: both readers), ATT_W
 * attempts for a writer and ATT_R for a reader, CRASHES restarts. Two
 * clients suffice: a violation is a pair of holders, and what a third
 * client does (entries, marks, being in force at a restart) only makes
 * masters refuse, or count for nobody, more often.
 *
 * Checked (scripts/check-model.sh), as an assertion: never a writer
 * holding beside another holder (writer or reader) within their validity.
 * Not vacuous: -DTWO_READERS -DWITNESS=1, two readers holding at once, is
 * reached.
 * Wrong variants, each caught:
 *  -DQUORUM=1 a minority suffices;
 *  -DREADER_IGNORES_WRITER a reader admitted beside a writer's entry (a
 *     read-count kept apart from the writer's key, checked separately);
 *  -DCOUNT_RESTARTED a restarted master counts at once.
 */

#define M 3
#define C 2
#ifndef QUORUM
#define QUORUM 2
#endif
#ifndef ATT_W
#define ATT_W 2 /* the writers' attempts each */
#endif
#ifndef ATT_R
#define ATT_R 1 /* the readers' */
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef WITNESS
#define WITNESS 0
#endif
#define NONE 255
#define BIT(i) (1 << (i))
#define COUNT3(x) (((x) & 1) + (((x) >> 1) & 1) + (((x) >> 2) & 1)) /* bits of M = 3 */

byte writer[M];   /* the writer with an entry on master m, or NONE */
byte readers[M];  /* the readers with an entry on master m (bits) */
byte mark[M];     /* a waiting writer's mark on master m, or NONE */
byte excluded[M]; /* clients in force when master m last restarted (bits): while any,
                     m's admissions count for nobody */
byte votes[C];    /* the masters whose admission of client c's attempt counts (bits) */
byte live;        /* clients in an attempt or a hold (bits) */
byte writers_holding, readers_holding;
byte crashes;
hidden byte i;

/* Client c's entries go everywhere, and it is no longer in force: no
 * master waits for it any more. */
inline gone(c)
{
    for (i : 0 .. M - 1) {
        if
        :: writer[i] == c -> writer[i] = NONE
        :: else -> skip
        fi;
        readers[i] = readers[i] & ~BIT(c);
        excluded[i] = excluded[i] & ~BIT(c)
    }
    i = 0;
    live = live & ~BIT(c);
    votes[c] = 0
}

/* The script on master m for client c: admitted or not. */
inline admit(c, w, m, admitted)
{
    admitted = false;
    if
    :: w && writer[m] == NONE && readers[m] == 0 ->
        writer[m] = c;
        admitted = true;
        if
        :: mark[m] == c -> mark[m] = NONE
        :: else -> skip
        fi
    :: w && !(writer[m] == NONE && readers[m] == 0) ->
        if
        :: mark[m] == NONE -> mark[m] = c
        :: else -> skip
        fi
#ifdef READER_IGNORES_WRITER
    :: !w && mark[m] == NONE ->
#else
    :: !w && writer[m] == NONE && mark[m] == NONE ->
#endif
        readers[m] = readers[m] | BIT(c);
        admitted = true
    :: else -> skip
    fi
}

proctype client(byte c; bool w)
{
    byte m, n;
    bool admitted;

attempt:
    if
    :: n == (w -> ATT_W : ATT_R) -> goto done
    :: else -> n++
    fi;
    live = live | BIT(c);
    for (m : 0 .. M - 1) {
        atomic {
            if
            :: skip /* the request is lost */
            :: admit(c, w, m, admitted);
               if
               :: admitted && excluded[m] == 0 -> votes[c] = votes[c] | BIT(m)
               :: true -> skip /* refused, the master excluded, or the reply lost */
               fi;
               admitted = false
            fi
        }
    }
    m = 0;
    if
    :: COUNT3(votes[c]) >= QUORUM ->
        atomic {
            if
            :: w -> writers_holding++
            :: else -> readers_holding++
            fi;
            assert(writers_holding == 0 || (writers_holding == 1 && readers_holding == 0));
            assert(!(WITNESS == 1 && readers_holding == 2))
        }
        /* Released, or its validity ran out (paused): either way its
         * entries go and the hold ends. */
        atomic {
            if
            :: w -> writers_holding--
            :: else -> readers_holding--
            fi;
            gone(c)
        }
        goto attempt
    :: else ->
        atomic { gone(c) }
        goto attempt
    fi;

done:
    /* The wait is over: a mark left goes with it. */
    atomic {
        for (m : 0 .. M - 1) {
            if
            :: mark[m] == c -> mark[m] = NONE
            :: else -> skip
            fi
        }
        m = 0
    }
}

/* A master restarts empty, at any time: its admissions count for nobody
 * until every client in force now is done (the restart rule). */
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
            writer[m] = NONE;
            readers[m] = 0;
            mark[m] = NONE;
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
        for (i : 0 .. M - 1) {
            writer[i] = NONE;
            mark[i] = NONE
        }
        i = 0;
#ifdef TWO_READERS
        run client(0, false);
#else
        run client(0, true);
#endif
#ifdef TWO_WRITERS
        run client(1, true);
#else
        run client(1, false);
#endif
        run restarts()
    }
}
