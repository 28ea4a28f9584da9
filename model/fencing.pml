/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fencing tokens over a quorum of independent masters (docs/fencing.md):
 * the specification the code follows (src/lock/acquire.c, src/lock/fence_seed.c,
 * src/wire/scripts.c).
 *
 * A fenced acquire has two rounds. Round 1 is the acquire: SET NX on every
 * master; each that says OK also answers its fencing counter, or that its
 * counter does not count (not seeded in this run of the master). When a
 * quorum said OK and a quorum of those answered a counter, the token is
 * T = 1 + the greatest counter answered. Round 2, on every master: if the
 * key still holds our value and the counter counts there, counter :=
 * max(counter, T), and the master confirms. The lock is granted, with T,
 * when a quorum confirmed before the lock's validity (counted from before
 * round 1) ran out; otherwise the attempt fails. A protected storage keeps
 * the greatest token it was written with and refuses a write with a lower
 * one.
 *
 * Counters and restarts. Each master has one counter (one key, whatever
 * the resource), which counts only in the run of the master it was seeded
 * in (a new run_id at every restart). A new deployment starts with no
 * counter seeded. A master that restarted takes part in the lock at once
 * (its SET NX counts toward the quorum, as before) but not in fencing
 * until it is seeded again: (1) the seeder sees the master not seeded in
 * its new run; (2) only then reads the counter every other master holds,
 * counting in its own run or not (a read may be lost); (3) the seed is the
 * greatest read when a majority of the others (with 3 masters, both)
 * answered a counter that counts; else, when the answers and the master
 * itself make a quorum, the greatest read or the clock, whichever is
 * greater (the clock floor); else it gives up; (4) sends the seed to that
 * master, which, if still in the run seen in (1) and still not seeded
 * there, sets counter := max(counter, seed) and counts from then on. A
 * request never reaches a later run of its master (a restart closes the
 * connection).
 *
 * The clock floor is the one assumption about time: the wall clock the
 * seeder reads is at least every token granted before (tokens start from
 * a reading of the clock in microseconds and grow by one a lock: far
 * slower than the clock; clocks are not set back by more than the time
 * since). The model's clock is the least value that satisfies it, the
 * greatest token granted so far. Without empty restarts (AOF only) the
 * clock is not needed: -DCLOCK_ZERO -DAOF_ONLY passes.
 *
 * Modelled: 3 masters; client 0 makes ACQ0 attempts, client 1 ACQ1, each
 * client one after the other (a failed attempt counts as one), each with
 * its own value; a seeder; at most CRASHES restarts in all. Each request
 * reaches its master once, in any order, interleaved with everybody
 * else's, or is lost (not with -DNO_LOSS); its reply may be lost too (a
 * late reply, ignored, is a lost one). A granted holder writes to the
 * storage with its token any number of times, also after its validity
 * ran out (paused, unaware), until it releases.
 *
 * Abstracted:
 *  - Time. An attempt is live from its start (t0) until its validity runs
 *    out (at any step: delays are unbounded) or it ends; a holder counts
 *    as holding only while live. Keys never expire while their attempt is
 *    live (the TTL outlasts the validity); once it is not, they may go at
 *    any step. Extending is the validity running out later, so it is not
 *    modelled apart (nor an extend across a master's restart: see
 *    docs/fencing.md).
 *  - Release: the attempt's keys go when it ends. A release lost or late
 *    leaves a key that only refuses other clients' SETs until it expires,
 *    which is the same as those SETs being lost.
 *  - Restarts are instantaneous: while down, a master only loses
 *    requests, which the model already does. Every restart is a new run,
 *    so the counter stops counting. Kept (AOF, appendfsync always): key
 *    and counter survive; at any time. Empty (no persistence): key and
 *    counter lost; a delayed restart, so only once no live attempt has its
 *    key there (an attempt live when the master went down is past its
 *    validity when it comes back, a TTL later). A counter restored from an
 *    older snapshot lies between the two, and the seed's max covers it.
 *  - One resource. Other resources sharing a master's counter only raise
 *    it (a max), which nothing here relies on not happening.
 *  - One seeder. Another seeding of the same run is as good (its reads
 *    also follow the restart), and once one applied, the others find the
 *    master seeded and do nothing. Seedings of different masters run one
 *    after the other here; in the library they overlap, which changes
 *    only when a read sees another master's counter raised: a seed is a
 *    lower bound either way, and the max keeps the greater.
 *
 * Checked (scripts/check-model.sh), as assertions (-DPROPS=1, 2 or 4
 * asserts property 1, 2 or 3 alone):
 *  1. mutual exclusion: a lock is never granted while another holder is
 *     live (one_holder);
 *  2. token order: a token granted is greater than every token granted
 *     before it (token_order);
 *  3. fencing, as the storage sees it: a write it accepts never comes from
 *     a lock granted before the lock of a write it accepted earlier
 *     (write_order), and a write by the holder of the last lock granted is
 *     never refused (newest_writes). It follows from 2 and the storage's
 *     rule; -DPROPS=4 shows what each broken order does to the data.
 * Exhaustive for 2 + 1 attempts without restarts, and 1 + 1 attempts with
 * two restarts (and, not in the script for time, 2 + 1 with one). The
 * checks are not vacuous (WITNESS, each reached): all three attempts
 * granted (1); a master restarted and seeded again confirming a token
 * that is granted (2); a paused holder's write refused after the next
 * holder wrote (3); a token granted after two masters restarted (4).
 * Runs start from a new deployment, no counter seeded; -DIN_USE_AT_START
 * from every counter in use at 0, which keeps the runs with two restarts
 * within memory.
 *
 * Wrong variants, each caught (property 2 unless said; and 3, with
 * -DPROPS=4, for every one that breaks the order):
 *  -DONE_ROUND increments the counters in the acquire (SET NX, INCR) and
 *     takes T = the greatest of them, no round 2: two locks get the same
 *     token with no request lost and no restart (-DNO_LOSS);
 *  -DNO_ROUND2_DEADLINE grants on round 2's confirmations however late:
 *     the lock is handed over while the next holder holds it (1), with a
 *     token below that holder's (2);
 *  -DNO_KEY_CHECK confirms round 2 whoever holds the key: a token is
 *     raised into a counter that the key's holder has already read, and
 *     that holder's token, computed from the old value, is no greater;
 *  -DFEW_COUNTERS computes T from the OK replies that carry a counter,
 *     however few (the first design): one master not seeded, one reply
 *     lost, T comes from the one counter that missed the last token, and
 *     the master whose reply was lost confirms it;
 *  -DNO_RESEED lets a restarted master count at once (empty: counter 0);
 *  -DSEED_ANY_INCARNATION seeds with counters read before the restart was
 *     seen (no run check): the seed misses the tokens granted in between;
 *  -DSEED_FROM_ONE seeds from one other master counting, a minority of
 *     them, without the clock floor;
 *  -DNO_CLOCK_FLOOR seeds from a quorum of counters, counting or not,
 *     without the clock: a majority restarted empty hands out a token
 *     again (-DCRASHES=2);
 *  -DCLOCK_ZERO reads a clock set back to 0: caught likewise (the clock
 *     floor is what covers a counter lost on a majority), but not with
 *     -DAOF_ONLY (restarts that keep the counters do not need it);
 *  -DSEED_PLAIN_SET sets the counter to the seed instead of the greater
 *     of the two: a master restarted with AOF keeps a token that the
 *     others, read before it reached them, do not have yet, and loses it;
 *  -DUNSAFE_RESTART restarts a master empty at once, while an attempt is
 *     live there: two holders (1), and tokens out of order (2, 3);
 *  -DQUORUM=1 (a minority suffices): two holders (1).
 * spin -t replays a trail in words (the printf of each step).
 */

#define M 3
#define C 2
#ifndef ACQ0
#define ACQ0 2 /* client 0's attempts */
#endif
#ifndef ACQ1
#define ACQ1 1 /* client 1's */
#endif
#ifndef CRASHES
#define CRASHES 1 /* restarts, in all */
#endif
#ifndef QUORUM
#define QUORUM 2 /* -DQUORUM=1, a minority, is caught by property 1 */
#endif
#ifndef PROPS
#define PROPS 7 /* the properties asserted: 1 | 2 | 4, for 1, 2, 3 */
#endif
#define ACQ 2    /* values per client: attempt i of client c is c * ACQ + i */
#define NONE 255
#define ALL 7    /* every master */
#define BIT(i) (1 << (i))
#define OWNER(a) ((a) / ACQ)

/* Master m's key is held by a live attempt. */
#define LIVE_KEY(m) (key[m] != NONE && live[OWNER(key[m])] && cur[OWNER(key[m])] == key[m])
/* Attempt a has a key somewhere. */
#define HAS_KEY(a) (key[0] == (a) || key[1] == (a) || key[2] == (a))

/* The masters. */
byte key[M] = NONE; /* the attempt whose value the key holds, or NONE */
byte ctr[M];        /* the fencing counter */
#ifndef IN_USE_AT_START
bit seeded[M];      /* it counts, in this run (none at the start: a new deployment) */
#else
bit seeded[M] = 1;  /* all in use at the start, as after the first seedings */
#endif
byte runid[M];      /* the run: its run_id, new at every restart */
byte crashes;       /* restarts so far */

/* The clients. */
byte cur[C] = NONE; /* the current attempt */
bit live[C];        /* it started and has validity left, and is not over */
bit holds[C];       /* granted and not released */
byte gidx[C];       /* the holder's lock: 1 for the first granted, ... */
byte running = C;   /* clients with attempts left */

/* What was granted, and the storage. */
byte grants;        /* locks granted so far */
byte tmax;          /* the greatest token granted */
byte store_max;     /* the storage: the greatest token written */
byte store_last;    /* the lock (gidx) of the last write it accepted */

/* The properties, named for spin's report of a violation. */
hidden byte one_holder, token_order, write_order, newest_writes;
#ifndef WITNESS
#define WITNESS 0 /* none: see the header */
#endif
hidden byte not_all_granted, no_seeded_confirm, no_write_refused, no_grant_after_two;
#if WITNESS == 2
#define WITNESS_AGAIN(m) ; again = again || runid[m] != 0
#else
#define WITNESS_AGAIN(m)
#endif

inline drop_keys(a)
{
    if :: key[0] == (a) -> key[0] = NONE :: else fi;
    if :: key[1] == (a) -> key[1] = NONE :: else fi;
    if :: key[2] == (a) -> key[2] = NONE :: else fi
}

/* AOF, appendfsync always: everything kept, but a new run. */
inline restart_kept(m)
{
    printf("m%d restarts (AOF): key and counter %d kept\n", m, ctr[m]);
    runid[m]++;
#ifndef NO_RESEED
    seeded[m] = 0
#endif
}

/* No persistence: the key and the counter lost. */
inline restart_empty(m)
{
    printf("m%d restarts empty\n", m);
    runid[m]++;
    key[m] = NONE;
    ctr[m] = 0;
#ifndef NO_RESEED
    seeded[m] = 0
#endif
}

/* Round 1 on master m: SET NX; the reply says OK and carries the
 * counter if it counts. Or the request is lost. */
inline round1(m)
{
    if
    :: key[m] != NONE -> printf("%c: SET NX on m%d: refused\n", 65 + c, m)
    :: key[m] == NONE ->
        key[m] = att;
#ifdef ONE_ROUND
        if
        :: seeded[m] -> ctr[m]++
        :: else
        fi;
#endif
        if
        :: ok++;
           if
           :: seeded[m] ->
               oks++;
               printf("%c: SET NX on m%d: OK, counter %d\n", 65 + c, m, ctr[m]);
               if
               :: ctr[m] > maxc -> maxc = ctr[m]
               :: else
               fi
           :: else -> printf("%c: SET NX on m%d: OK, no counter\n", 65 + c, m)
           fi
#ifndef NO_LOSS
        :: printf("%c: SET NX on m%d: applied, reply lost\n", 65 + c, m)
#endif
        fi
#ifndef NO_LOSS
    :: key[m] == NONE -> printf("%c: SET NX on m%d: request lost\n", 65 + c, m)
#endif
    fi;
    sent = sent | BIT(m)
}

/* Round 2 on master m: the key still ours and the counter counting:
 * raise it to T and confirm. Counted only while live. */
#ifndef NO_KEY_CHECK
#define OURS(m) (key[m] == att)
#else
#define OURS(m) true /* whoever holds the key */
#endif
inline round2(m)
{
    if
    :: OURS(m) && seeded[m] ->
        if
        :: ctr[m] < t -> ctr[m] = t
        :: else
        fi;
        printf("%c: round 2 on m%d: counter %d\n", 65 + c, m, ctr[m]);
        if
#ifndef NO_ROUND2_DEADLINE
        :: live[c] -> conf++ WITNESS_AGAIN(m); printf("%c: m%d confirms\n", 65 + c, m)
#else
        :: conf++ WITNESS_AGAIN(m); printf("%c: m%d confirms\n", 65 + c, m)
#endif
        :: else -> printf("%c: m%d confirms too late\n", 65 + c, m)
#ifndef NO_LOSS
        :: printf("%c: m%d confirms, reply lost\n", 65 + c, m)
#endif
        fi
#ifndef NO_LOSS
    :: OURS(m) && seeded[m] -> printf("%c: round 2 on m%d: request lost\n", 65 + c, m)
#endif
    :: !(OURS(m) && seeded[m]) -> printf("%c: round 2 on m%d: not ours or not seeded\n", 65 + c, m)
    fi;
    sent = sent | BIT(m)
}

/* Client c is granted the lock with token t: properties 1 and 2. */
inline grant()
{
    printf("%c: GRANTED, token %d\n", 65 + c, t);
#if PROPS & 1
    one_holder = !(holds[1 - c] && live[1 - c]);
    assert(one_holder);
#endif
#if PROPS & 2
    token_order = t > tmax;
    assert(token_order);
#endif
    if
    :: t > tmax -> tmax = t
    :: else
    fi;
    grants++;
    gidx[c] = grants;
    holds[c] = 1;
#if WITNESS == 1
    not_all_granted = grants < ACQ0 + ACQ1;
    assert(not_all_granted);
#elif WITNESS == 2
    no_seeded_confirm = !again;
    assert(no_seeded_confirm);
#elif WITNESS == 4
    no_grant_after_two = crashes < 2;
    assert(no_grant_after_two);
#endif
    skip
}

/* Client c writes to the storage with token t: property 3. */
inline write()
{
    if
    :: t >= store_max ->
        printf("%c: writes with %d: accepted\n", 65 + c, t);
#if PROPS & 4
        write_order = gidx[c] >= store_last;
        assert(write_order);
#endif
        store_max = t;
        store_last = gidx[c]
    :: else ->
        printf("%c: writes with %d: refused\n", 65 + c, t);
#if PROPS & 4
        newest_writes = gidx[c] != grants;
        assert(newest_writes);
#endif
#if WITNESS == 3
        no_write_refused = false;
        assert(no_write_refused);
#endif
        skip
    fi
}

#define R1 0   /* round 1 */
#define R2 1   /* round 2 */
#define HELD 2 /* granted: writing to the storage */
#define DONE 3

/* Attempt i of client c starts: t0, its validity begins. */
inline begin()
{
    att = c * ACQ + i;
    cur[c] = att;
    live[c] = 1;
    phase = R1;
    printf("%c: attempt %d\n", 65 + c, i + 1)
}

/* The attempt is over (released, or failed): its keys go; the next
 * attempt, if any. */
inline finish()
{
    live[c] = 0;
    drop_keys(att);
    t = 0;
    gidx[c] = 0;
    i++;
    if
    :: (c == 0 && i < ACQ0) || (c == 1 && i < ACQ1) -> begin()
    :: else -> phase = DONE; i = 0; att = 0; cur[c] = NONE; running--
    fi
}

/* Round 1 settled on every master: decide. */
inline decide1()
{
    if
    :: sent == ALL ->
        if
#ifndef FEW_COUNTERS
        :: live[c] && ok >= QUORUM && oks >= QUORUM ->
#else
        :: live[c] && ok >= QUORUM ->
#endif
#ifndef ONE_ROUND
            t = maxc + 1;
            printf("%c: T = %d\n", 65 + c, t);
            phase = R2
#else
            t = maxc;
            printf("%c: T = %d\n", 65 + c, t);
            grant();
            phase = HELD
#endif
        :: else -> printf("%c: fails\n", 65 + c); finish()
        fi;
        sent = 0; ok = 0; oks = 0; maxc = 0
    :: else
    fi
}

/* Round 2 settled on every master: decide. */
inline decide2()
{
    if
    :: sent == ALL ->
        if
#ifndef NO_ROUND2_DEADLINE
        :: live[c] && conf >= QUORUM ->
#else
        :: conf >= QUORUM ->
#endif
            grant();
            phase = HELD
        :: else -> printf("%c: fails\n", 65 + c); finish()
        fi;
        sent = 0; conf = 0
    :: else
    fi
}

/* The validity ran out in round 1. */
inline give_up()
{
    printf("%c: fails\n", 65 + c);
    sent = 0; ok = 0; oks = 0; maxc = 0;
    finish()
}

/* A client's attempts. A decision is taken in the step of the last
 * request it waits for: a lapse in between is the same as one before it.
 * An attempt whose validity ran out in round 1 fails at once: its SETs
 * yet to arrive would set keys that only refuse others (lost SETs). */
proctype client(byte c)
{
    byte i, att, phase, sent, ok, oks, maxc, t, conf;
#if WITNESS == 2
    bit again; /* a master seeded again confirmed this attempt */
#endif

    atomic { begin() }
end:
    do
    :: atomic { phase == R1 && live[c] && !(sent & 1) -> round1(0); decide1() }
    :: atomic { phase == R1 && live[c] && !(sent & 2) -> round1(1); decide1() }
    :: atomic { phase == R1 && live[c] && !(sent & 4) -> round1(2); decide1() }
    :: atomic { phase == R1 && !live[c] -> give_up() }
    :: atomic { phase == R2 && !(sent & 1) -> round2(0); decide2() }
    :: atomic { phase == R2 && !(sent & 2) -> round2(1); decide2() }
    :: atomic { phase == R2 && !(sent & 4) -> round2(2); decide2() }
    :: atomic { phase == HELD -> write() }
    :: atomic { phase == HELD -> printf("%c: releases\n", 65 + c); holds[c] = 0; finish() }
    od
}

/* The clock floor (see the header). */
#if defined(CLOCK_ZERO)
#define CLOCK 0
#else
#define CLOCK tmax /* the least value the assumption allows */
#endif
/* Counting answers that make the seed without the clock: a majority of
 * the others (-DSEED_FROM_ONE: one). */
#ifndef SEED_FROM_ONE
#define NEEDED ((M - 1) / 2 + 1)
#else
#define NEEDED 1
#endif

/* Seeding, step 2: read the counter master o holds (not the one seeded),
 * whether it counts or not; or the read is lost. */
inline seed_read(o)
{
    if
    :: seeded[o] ->
        printf("seeder: m%d's counter: %d, counting\n", o, ctr[o]);
        inuse++; answered++;
        if
        :: ctr[o] > seed -> seed = ctr[o]
        :: else
        fi
    :: !seeded[o] ->
        printf("seeder: m%d's counter: %d, not counting\n", o, ctr[o]);
        answered++;
        if
        :: ctr[o] > seed -> seed = ctr[o]
        :: else
        fi
#ifndef NO_LOSS
    :: printf("seeder: m%d's counter: read lost\n", o)
#endif
    fi;
    sent = sent | BIT(o)
}

/* The seeder. sent: 0 while idle, else the masters read so far, the one
 * being seeded included. */
inline seed_begin(k)
{
    m = k;
    r = runid[k];
    sent = BIT(k);
    printf("seeder: m%d not seeded\n", k)
}

#ifndef SEED_ANY_INCARNATION
#define SEEDABLE(m) !seeded[m]
#else
#define SEEDABLE(m) true /* counters read before the restart was seen */
#endif
active proctype seeder()
{
    byte m, r, seed, sent, inuse, answered;
end:
    do
    /* 1: master m seen not seeded in its run r. */
    :: atomic { sent == 0 && running > 0 && SEEDABLE(0) -> seed_begin(0) }
    :: atomic { sent == 0 && running > 0 && SEEDABLE(1) -> seed_begin(1) }
    :: atomic { sent == 0 && running > 0 && SEEDABLE(2) -> seed_begin(2) }
    /* 2: the others' counters, in any order. */
    :: atomic { sent != 0 && sent != ALL && !(sent & 1) -> seed_read(0) }
    :: atomic { sent != 0 && sent != ALL && !(sent & 2) -> seed_read(1) }
    :: atomic { sent != 0 && sent != ALL && !(sent & 4) -> seed_read(2) }
    /* 3: the seed: from a majority of the others counting, else from a
     * quorum with the master itself and the clock floor, else none. */
    :: atomic { sent == ALL ->
        if
        :: inuse >= NEEDED -> skip
        :: inuse < NEEDED && answered + 1 >= QUORUM ->
#ifndef NO_CLOCK_FLOOR
            if
            :: CLOCK > seed -> seed = CLOCK
            :: else
            fi;
            printf("seeder: too few counting: the clock floor, seed %d\n", seed)
#else
            skip
#endif
        :: else -> printf("seeder: too few answers: gives up\n"); sent = 0
        fi;
        /* 4: applied in run r only, to a master still not seeded. */
        if
#ifndef SEED_ANY_INCARNATION
        :: sent != 0 && runid[m] == r && !seeded[m] ->
#else
        :: sent != 0 && !seeded[m] ->
#endif
#ifndef SEED_PLAIN_SET
            if
            :: ctr[m] < seed -> ctr[m] = seed
            :: else
            fi;
#else
            ctr[m] = seed;
#endif
            seeded[m] = 1;
            printf("seeder: m%d seeded, counter %d\n", m, ctr[m])
        :: sent != 0 && !(runid[m] == r && !seeded[m]) ->
            printf("seeder: m%d restarted again or seeded: nothing done\n", m)
        :: sent == 0 -> skip
        fi;
        m = 0; r = 0; seed = 0; sent = 0; inuse = 0; answered = 0 }
    od
}

/* Validity running out, keys expiring, masters restarting. */
active proctype env()
{
end:
    do
    :: atomic { live[0] -> live[0] = 0; printf("A's validity runs out\n") }
    :: atomic { live[1] -> live[1] = 0; printf("B's validity runs out\n") }
    :: atomic { !live[0] && HAS_KEY(cur[0]) -> drop_keys(cur[0]); printf("A's keys expire\n") }
    :: atomic { !live[1] && HAS_KEY(cur[1]) -> drop_keys(cur[1]); printf("B's keys expire\n") }
    :: atomic { running > 0 && crashes < CRASHES -> crashes++; restart_kept(0) }
    :: atomic { running > 0 && crashes < CRASHES -> crashes++; restart_kept(1) }
    :: atomic { running > 0 && crashes < CRASHES -> crashes++; restart_kept(2) }
#if defined(AOF_ONLY)
    /* no empty restarts */
#elif !defined(UNSAFE_RESTART)
    :: atomic { running > 0 && crashes < CRASHES && !LIVE_KEY(0) -> crashes++; restart_empty(0) }
    :: atomic { running > 0 && crashes < CRASHES && !LIVE_KEY(1) -> crashes++; restart_empty(1) }
    :: atomic { running > 0 && crashes < CRASHES && !LIVE_KEY(2) -> crashes++; restart_empty(2) }
#else
    :: atomic { running > 0 && crashes < CRASHES -> crashes++; restart_empty(0) }
    :: atomic { running > 0 && crashes < CRASHES -> crashes++; restart_empty(1) }
    :: atomic { running > 0 && crashes < CRASHES -> crashes++; restart_empty(2) }
#endif
    od
}

init
{
    atomic {
        run client(0);
        run client(1)
    }
}
