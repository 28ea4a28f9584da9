/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Masters restarted empty at any time, and the rule that keeps the lock
 * safe (docs/safety.md, "Masters restarted empty"): the specification the
 * code is to follow.
 *
 * Redlock assumes no master forgets a key before it expires. A master
 * without persistence killed and restarted at once forgets every key it
 * held, and a client taking it with a minority of the others then holds
 * the lock beside the first holder. The rule: an OK from a master counts
 * toward a quorum (the quorum of the configured masters, never fewer) only
 * once the master's current run began at least MAXTTL ago (MAXTTL: the
 * longest TTL the deployment's clients may ask for; an acquire or an
 * extension asking more is refused), by a bound on that start the client
 * can trust. A client computes it when it connects to a run and keeps it
 * for that connection (a restart closes it); the master is used for
 * releases meanwhile. The bound:
 *  - a master declared durable (AOF, appendfsync always) keeps its keys:
 *    none, it counts at once;
 *  - an identified master (INFO answers run_id and uptime_in_seconds):
 *    when the client saw an earlier run of it, the moment its connection
 *    to the new run was established (the restart came before it: a bound
 *    on the client's own monotonic clock). On its first connection to that
 *    master, the client has seen no earlier run and has only the uptime:
 *    the earlier of that moment and (INFO reply received - uptime);
 *  - a master that answers no run_id (INFO denied): a script on every
 *    connection. The marker key (no TTL: a restart without persistence
 *    loses it) missing: it is written again with a guard key (PX MAXTTL),
 *    and the bound is now. Marker and guard there: the guard's setting
 *    (now - (MAXTTL - its PTTL)). Marker there, guard gone: none.
 * Extensions count OKs by the same rule; a holder whose extension fails
 * stops and releases.
 *
 * The uptime is the master's wall clock (Redis's INFO: server.unixtime -
 * server.stat_starttime, both time(NULL), in whole seconds), so a step of
 * that clock forward after the start makes the run look older by the
 * step. -DSTEP lets a stepped uptime put the start before anything (a
 * step of any size).
 *
 * Modelled: 3 masters: 0 declared durable, 1 identified, 2 answering no
 * run_id; 1 and 2 restart empty at any time, CRASHES restarts in all; 2
 * clients, client 0 making ACQ0 attempts and client 1 ACQ1, one after the
 * other (acquire; once held, EXTS extensions, 0 or 1; release). Each
 * request reaches its master once, in any order, or is lost, and its
 * reply may be lost (late = lost). A holder may be paused: its validity
 * runs out while it still believes it holds.
 *
 * Abstracted:
 *  - Time, as in fencing.pml: an attempt's validity runs out at any step;
 *    a key never expires while the validity of the round (acquire or
 *    extension) that last set its TTL is in force. A key whose holder's
 *    validity ran out, or that an extension did not refresh, only refuses
 *    SETs until it expires: the same as those SETs lost, so it goes at once.
 *  - MAXTTL: a bound B + MAXTTL (plus the drift allowance) is passed only
 *    once every round that started before B is over (its validity, at most
 *    its TTL <= MAXTTL from its start, ran out). So a bound is a snapshot
 *    of the clients with a round started before it still in force (the
 *    validity; an extension in flight), emptied as those rounds end: a
 *    master counts for a client, and the guard key is there, while its
 *    snapshot is not empty. Passed later instead, fewer OKs count: the
 *    state a grant followed by a release reaches, so not modelled apart.
 *  - Restarts: at once (a slower one only loses requests, which the model
 *    does), so the keys lost were set before the new run's start, a safe
 *    bound. The clients connected reconnect at once: a later reconnection
 *    is the same with requests lost meanwhile and a later bound. So the
 *    connection's bound and the uptime's are the same instant:
 *    -DUPTIME_ALWAYS (the uptime's bound on every connection) differs only
 *    with -DSTEP. A restart of master 0, durable, keeps its keys and does
 *    not exclude it: the same as its requests lost, not modelled apart.
 *    A reconnection to the same run (same run_id) changes nothing.
 *  - The drift allowance, the uptime's truncation to seconds (+1 s) and
 *    the clients' clock rates are in "MAXTTL passed" (clock_check.pml has
 *    masters' clocks that run fast; here they keep keys for their TTL, and
 *    only the uptime may be stepped).
 *
 * Checked (scripts/check-model.sh), as an assertion: a lock is never
 * granted while another client holds it within its validity (one_holder;
 * a validity never comes back: so never two live holders). Exhaustive for
 * 2 + 2 attempts and 2 restarts; -DFRESH (client 1 starts connected to
 * nothing, having seen no run: its first connections take the uptime's
 * bound) for 2 + 1; -DEXTEND_ANY (an extension counts every OK: the
 * exclusion is needed by acquires only). The checks are not vacuous
 * (WITNESS, each reached): a grant counting master 1 in a run after a
 * restart (1), master 2 likewise (2), an extension counting a restarted
 * master (3).
 *
 * Wrong variants, each caught:
 *  -DCOUNT_AT_ONCE master 1, restarted, counts at once;
 *  -DTRUST_UNIDENTIFIED master 2, with no run_id, taken as never
 *     restarted;
 *  -DMARKER_ONLY the marker without the guard: the first client to find
 *     it missing writes it again, the next one finds it and counts at
 *     once, while the holder whose key the restart lost still holds;
 *  -DLONG_TTL client 0 may ask a TTL over MAXTTL: its rounds outlive the
 *     bound + MAXTTL;
 *  -DDURABLE_EMPTY master 0, declared durable, restarts empty;
 *  -DSTEP -DUPTIME_ALWAYS the uptime trusted across a step by a client
 *     that saw the previous run;
 *  -DSTEP -DFRESH the same on a client's first connection to a master:
 *     the residual risk (a step of a master's wall clock forward after a
 *     restart less than MAXTTL before a client's first connection to it);
 *     counting first connections from the connection too (-DNO_UPTIME:
 *     a client's masters count MAXTTL after it starts) passes.
 * spin -t replays a trail in words (the printf of each step).
 */

#define M 3
#define C 2
#define QUORUM 2    /* of the 3 configured masters: exclusions never shrink it */
#define NONE 255
#define ALL 7
#define DUR 0       /* master 0: declared durable */
#define IDF 1       /* master 1: identified (run_id, uptime) */
#define UNID 2      /* master 2: INFO denied */
#define BIT(i) (1 << (i))
#define IX(o, m) ((o) * M + (m))

#define R1 0   /* the acquire's round */
#define HELD 1 /* granted */
#define EXT 2  /* an extension's round */
#define DONE 3 /* no attempt left */

#ifndef ACQ0
#define ACQ0 2 /* client 0's attempts */
#endif
#ifndef ACQ1
#define ACQ1 2 /* client 1's */
#endif
#ifndef EXTS
#define EXTS 1 /* extensions a hold may make: 0 or 1 (a key it did not
                  refresh goes at once) */
#endif
#ifndef CRASHES
#define CRASHES 2 /* restarts, in all */
#endif

#ifndef WITNESS
#define WITNESS 0
#endif

/* The masters. */
byte key[M] = NONE; /* the client whose key it holds, or NONE */
bit again[M];       /* the current run is not the first */
bit marker[M] = 1;  /* master 2: the marker key (written long ago) */
byte gv[M], gp[M];  /* master 2: the guard key's bound (rounds started before
                       it): there while not empty */
byte rv[M], rp[M];  /* the current run's start, as a bound (the uptime's) */

/* The clients. */
bit live[C];        /* the attempt's validity is in force */
byte running = C;   /* clients with attempts left */
byte crashes;       /* restarts so far */
bit holds[C];       /* granted, not released (paused holders included) */
byte ph[C];         /* R1, HELD or EXT */
bit conn[C * M] = 1; /* client o connected to master m's current run */
bit seen[C * M] = 1; /* client o saw a run of master m before this one */
byte wv[C * M], wp[C * M]; /* client o's bound for master m: its OKs count
                              once both are empty */

hidden byte j;
hidden byte one_holder, no_restarted_counted, no_extension_counted;

/* The clients with a round in force that started before now: their
 * validity, and an extension in flight. -DLONG_TTL: client 0's rounds
 * are longer than MAXTTL: nothing bounds them. */
#ifdef LONG_TTL
#define BOUNDED(c) ((c) != 0)
#else
#define BOUNDED(c) true
#endif
#define SNAPV ((live[0] && BOUNDED(0) -> 1 : 0) | (live[1] && BOUNDED(1) -> 2 : 0))
#define SNAPP ((live[0] && ph[0] == EXT && BOUNDED(0) -> 1 : 0) | \
               (live[1] && ph[1] == EXT && BOUNDED(1) -> 2 : 0))

/* Client c's validity ran out, or its attempt ended: no bound waits for it. */
inline forget(c)
{
    for (j : 0 .. M - 1) {
        rv[j] = rv[j] & ~BIT(c); rp[j] = rp[j] & ~BIT(c);
        gv[j] = gv[j] & ~BIT(c); gp[j] = gp[j] & ~BIT(c)
    }
    for (j : 0 .. C * M - 1) {
        wv[j] = wv[j] & ~BIT(c); wp[j] = wp[j] & ~BIT(c)
    }
    j = 0
}

/* Client c's extension succeeded: its validity is now the extension's. */
inline renew(c)
{
    for (j : 0 .. M - 1) {
        rv[j] = (rv[j] & ~BIT(c)) | (rp[j] & BIT(c)); rp[j] = rp[j] & ~BIT(c);
        gv[j] = (gv[j] & ~BIT(c)) | (gp[j] & BIT(c)); gp[j] = gp[j] & ~BIT(c)
    }
    for (j : 0 .. C * M - 1) {
        wv[j] = (wv[j] & ~BIT(c)) | (wp[j] & BIT(c)); wp[j] = wp[j] & ~BIT(c)
    }
    j = 0
}

#define EXCL(o, m) ((wv[IX(o, m)] | wp[IX(o, m)]) != 0)
#define GUARD(m) ((gv[m] | gp[m]) != 0)

/* The OKs in mask that count for client c now. */
#define COUNTS(c, m, mask) (((mask) & BIT(m)) && !EXCL(c, m))
#define COUNT(c, mask) (COUNTS(c, 0, mask) + COUNTS(c, 1, mask) + COUNTS(c, 2, mask))

inline drop_keys(c)
{
    for (j : 0 .. M - 1) {
        if
        :: key[j] == c -> key[j] = NONE
        :: else
        fi
    }
    j = 0
}

/* The attempt ends (failed, released, or lost); the next one starts. */
inline finish()
{
    live[c] = 0;
    holds[c] = 0;
    drop_keys(c);
    forget(c);
    sent = 0; ok = 0; okr = 0; applied = 0; exts = 0;
    i++;
    if
    :: (c == 0 && i < ACQ0) || (c == 1 && i < ACQ1) ->
        ph[c] = R1; live[c] = 1; printf("%c: attempt %d\n", 65 + c, i + 1)
    :: else -> ph[c] = DONE; i = 0; running--
    fi
}

/* SET NX PX on master m. */
inline set_nx(m)
{
    if
    :: !conn[IX(c, m)] -> printf("%c: SET on m%d: not connected\n", 65 + c, m)
    :: conn[IX(c, m)] && key[m] != NONE -> printf("%c: SET on m%d: refused\n", 65 + c, m)
    :: conn[IX(c, m)] && key[m] == NONE ->
        key[m] = c;
        if
        :: ok = ok | BIT(m);
           if
           :: again[m] -> okr = okr | BIT(m)
           :: else
           fi;
           printf("%c: SET on m%d: OK\n", 65 + c, m)
        :: printf("%c: SET on m%d: applied, reply lost\n", 65 + c, m)
        fi
    :: conn[IX(c, m)] && key[m] == NONE -> printf("%c: SET on m%d: request lost\n", 65 + c, m)
    fi;
    sent = sent | BIT(m)
}

/* The extension on master m: the key still ours gets a new TTL. */
inline extend(m)
{
    if
    :: !conn[IX(c, m)] -> printf("%c: extend on m%d: not connected\n", 65 + c, m)
    :: conn[IX(c, m)] && key[m] != c -> printf("%c: extend on m%d: not ours\n", 65 + c, m)
    :: conn[IX(c, m)] && key[m] == c ->
        applied = applied | BIT(m);
        if
        :: ok = ok | BIT(m);
           if
           :: again[m] -> okr = okr | BIT(m)
           :: else
           fi;
           printf("%c: extend on m%d: OK\n", 65 + c, m)
        :: printf("%c: extend on m%d: applied, reply lost\n", 65 + c, m)
        fi
    :: conn[IX(c, m)] && key[m] == c -> printf("%c: extend on m%d: request lost\n", 65 + c, m)
    fi;
    sent = sent | BIT(m)
}

inline decide_acquire()
{
    if
    :: sent == ALL ->
        if
        :: live[c] && COUNT(c, ok) >= QUORUM ->
            printf("%c: GRANTED\n", 65 + c);
            one_holder = !(holds[1 - c] && live[1 - c]);
            assert(one_holder);
#if WITNESS == 1 || WITNESS == 2
            no_restarted_counted = !COUNTS(c, WITNESS, okr);
            assert(no_restarted_counted);
#endif
            holds[c] = 1;
            ph[c] = HELD;
            sent = 0; ok = 0; okr = 0
        :: else -> printf("%c: fails\n", 65 + c); finish()
        fi
    :: else
    fi
}

inline decide_extend()
{
    if
    :: sent == ALL ->
        if
#ifndef EXTEND_ANY
        :: live[c] && COUNT(c, ok) >= QUORUM ->
#else
        :: live[c] && ((ok & 1) != 0) + ((ok & 2) != 0) + ((ok & 4) != 0) >= QUORUM ->
#endif
            printf("%c: EXTENDED\n", 65 + c);
#if WITNESS == 3
            no_extension_counted = COUNT(c, okr) == 0;
            assert(no_extension_counted);
#endif
            for (j : 0 .. M - 1) { /* a key not extended: only refuses SETs */
                if
                :: key[j] == c && !(applied & BIT(j)) -> key[j] = NONE
                :: else
                fi
            }
            j = 0;
            renew(c);
            ph[c] = HELD;
            sent = 0; ok = 0; okr = 0; applied = 0
        :: else -> printf("%c: not extended: stops\n", 65 + c); finish()
        fi
    :: else
    fi
}

proctype client(byte c)
{
    byte i, exts;                /* attempts made; extensions of this hold */
    byte sent, ok, okr, applied; /* masters done; OKs heard; from a restarted run; extended */
    atomic { live[c] = 1; ph[c] = R1 }
end:
    do
    :: atomic { ph[c] == R1 && live[c] && !(sent & 1) -> set_nx(0); decide_acquire() }
    :: atomic { ph[c] == R1 && live[c] && !(sent & 2) -> set_nx(1); decide_acquire() }
    :: atomic { ph[c] == R1 && live[c] && !(sent & 4) -> set_nx(2); decide_acquire() }
    :: atomic { ph[c] == R1 && !live[c] -> printf("%c: fails\n", 65 + c); finish() }
    :: atomic { ph[c] == HELD -> printf("%c: releases\n", 65 + c); finish() }
    :: atomic { ph[c] == HELD && live[c] && exts < EXTS -> ph[c] = EXT; exts++; printf("%c: extends\n", 65 + c) }
    :: atomic { ph[c] == EXT && live[c] && !(sent & 1) -> extend(0); decide_extend() }
    :: atomic { ph[c] == EXT && live[c] && !(sent & 2) -> extend(1); decide_extend() }
    :: atomic { ph[c] == EXT && live[c] && !(sent & 4) -> extend(2); decide_extend() }
    :: atomic { ph[c] == EXT && !live[c] -> printf("%c: not extended: stops\n", 65 + c); finish() }
    od
}

/* Client o's bound for master m: now (its connection), or none. */
#define BOUND_NOW(o, m) wv[IX(o, m)] = SNAPV; wp[IX(o, m)] = SNAPP
#define NO_BOUND(o, m) wv[IX(o, m)] = 0; wp[IX(o, m)] = 0

/* Client o connects to master m's current run, and computes from when
 * its OKs count. */
inline connect(o, m)
{
    conn[IX(o, m)] = 1;
    if
    :: m == DUR -> NO_BOUND(o, m)
    :: m == IDF ->
#ifdef COUNT_AT_ONCE
        NO_BOUND(o, m)
#else
        if
#if !defined(UPTIME_ALWAYS)
        :: seen[IX(o, m)] -> BOUND_NOW(o, m); printf("%c: m%d: a new run: counts from now\n", 65 + o, m)
#endif
#ifdef NO_UPTIME
        :: !seen[IX(o, m)] -> BOUND_NOW(o, m); printf("%c: m%d: first run seen: counts from now\n", 65 + o, m)
#else
#if defined(UPTIME_ALWAYS)
        :: true ->
#else
        :: !seen[IX(o, m)] ->
#endif
            if
            :: wv[IX(o, m)] = rv[m]; wp[IX(o, m)] = rp[m];
               printf("%c: m%d: counts from its start (uptime)\n", 65 + o, m)
#ifdef STEP
            :: NO_BOUND(o, m);
               printf("%c: m%d: counts from its start (uptime after a step: long ago)\n", 65 + o, m)
#endif
            fi
#endif
        fi
#endif
    :: m == UNID ->
#ifdef TRUST_UNIDENTIFIED
        NO_BOUND(o, m)
#else
        if
        :: !marker[m] ->
            marker[m] = 1;
#ifndef MARKER_ONLY
            gv[m] = SNAPV; gp[m] = SNAPP;
#endif
            BOUND_NOW(o, m);
            printf("%c: m%d: no marker: written again, counts from now\n", 65 + o, m)
        :: marker[m] && GUARD(m) ->
            wv[IX(o, m)] = gv[m]; wp[IX(o, m)] = gp[m];
            printf("%c: m%d: marker and guard: counts from the guard\n", 65 + o, m)
        :: marker[m] && !GUARD(m) ->
            NO_BOUND(o, m);
            printf("%c: m%d: marker, no guard: counts\n", 65 + o, m)
        fi
#endif
    fi;
    seen[IX(o, m)] = 1
}

/* Master m restarts empty, at once: every connection to it closes, and
 * each client connected to it connects again at once (later is the same
 * with its requests lost meanwhile, and a later bound). */
inline restart_empty(m)
{
    printf("m%d restarts empty\n", m);
    key[m] = NONE;
    marker[m] = 0;
    gv[m] = 0; gp[m] = 0;
    rv[m] = SNAPV; /* the run starts now */
    rp[m] = SNAPP;
    again[m] = 1;
    if
    :: conn[IX(0, m)] -> connect(0, m)
    :: else
    fi;
    if
    :: conn[IX(1, m)] -> connect(1, m)
    :: else
    fi
}

#define RESTART (running > 0 && crashes < CRASHES)

/* Validity running out (its keys then only refuse SETs: gone), masters
 * restarting, client 1's first connections (-DFRESH). */
active proctype env()
{
end:
    do
    :: atomic { live[0] -> live[0] = 0; drop_keys(0); forget(0); printf("A's validity runs out\n") }
    :: atomic { live[1] -> live[1] = 0; drop_keys(1); forget(1); printf("B's validity runs out\n") }
#ifdef DURABLE_EMPTY
    :: atomic { RESTART -> crashes++; restart_empty(0) }
#endif
    :: atomic { RESTART -> crashes++; restart_empty(1) }
    :: atomic { RESTART -> crashes++; restart_empty(2) }
#ifdef FRESH
    /* Client 1's first connection to each master, at any time. */
    :: atomic { !conn[3] -> connect(1, 0) }
    :: atomic { !conn[4] -> connect(1, 1) }
    :: atomic { !conn[5] -> connect(1, 2) }
#endif
    od
}

init
{
    atomic {
#ifdef FRESH
        /* Client 1 starts later: connected to nothing, no run seen. */
        for (j : 0 .. M - 1) { conn[IX(1, j)] = 0; seen[IX(1, j)] = 0 }
        j = 0;
#endif
        run client(0);
        run client(1)
    }
}
