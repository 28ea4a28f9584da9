/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reentrant lock (redlock_acquire_options.owner in
 * include/redlock/redlock.h; rl_acquire_script and rl_release_script in
 * src/wire/scripts.c): the specification the scripts follow.
 *
 * Each master's key for a reentrant lock is a hash: field "" holds the
 * owner token, and each hold has a field named by its own value (random,
 * fresh for every attempt). The acquire of hold V by owner O, atomically
 * on each master: the key absent, or a hash of O's, gets field V (and the
 * owner field) and the master votes yes; anything else (another owner's
 * hash, a plain lock's string) gets nothing and a no. The hold is held
 * when a quorum voted yes. Its release, atomically on each master: remove
 * field V if there, and delete the key once no hold field is left. A
 * plain client takes the key with SET NX (a string) and releases it by
 * compare-and-delete.
 *
 * Modelled: 3 masters; owner A with two holds, an outer one and a second
 * one; and one other client, chosen at the start: owner B with one hold,
 * or the plain client. Each hold is its own process, so that the requests
 * of all of them reach the masters interleaved, each master applying one
 * at a time: A's second hold may be acquired while the outer is held
 * (nested), or once the outer is lost (lapsed, or failed) with the outer's
 * release still on its way (A acquires again), or alongside it. A hold's
 * acquire reaches the masters in any order; each request is applied, or
 * never arrives. The hold is then decided: held on a quorum of votes, or
 * not; failing with a quorum (an attempt whose validity ran out) also
 * stands for a reply lost or too late to count. Its holder stops counting
 * it held at any time (released, or its validity ran out); only then is
 * its release sent, reaching the masters in any order, each request
 * applied or lost. A lost release leaves a field its hold no longer
 * counts on, as does an acquire a master runs after the release (one
 * stopped with the request unread): such late requests are not modelled
 * apart. Each hold's field holds its deadline, and the scripts drop the
 * fields past theirs when they write the hash (the acquire, and a release
 * that removed its own field), so that such a field cannot keep the key
 * from going with the owner's last live hold: here, any write of a hash
 * may drop the fields of holds neither being acquired nor held (a field
 * past its deadline is of a hold whose validity has run out; the converse
 * need not hold, hence "may"). It adds no state: dropping a lapsed hold's
 * field is what that hold's own release, which may come at any time, does.
 *
 * Time is abstracted. A key may expire on a master at any time, whole,
 * once the holds whose fields it carries have lapsed: the acquire sets the
 * key's TTL to at least the hold's (PEXPIRE when the PTTL is less), so a
 * key outlives the validity of every hold it carries. Here a key expires
 * at any step at which no field in it belongs to a hold being acquired or
 * held, and a held hold may lapse at any step. At most EXPIRIES expiries,
 * to keep the state space small. Extending a held hold (rl_extend_script)
 * changes no field, only its deadline: here an extend is the hold staying
 * held or lapsing, so it is not modelled apart.
 *
 * Checked (scripts/check-model.sh), as assertions after every step:
 *  1. mutual exclusion: the holds counted held belong to one owner (A, B,
 *     or the plain client), and no two owners each have a hold that a
 *     quorum of masters carries;
 *  2. a release removes its own field only, and those of holds that have
 *     lapsed: the fields of holds being acquired or held stay (so a hold
 *     that lapsed everywhere cannot, when its release arrives, remove its
 *     owner's newer hold); and a hold counted held is carried by a quorum
 *     of masters;
 *  3. a release deletes the key when no hold field is left there, and
 *     only then;
 *  4. no deadlock: every process finishes (no invalid end state; nothing
 *     here waits for another, so no variant is shown to fail it).
 * About 4 million states (10 s, 380 MB). Each of 1-3 is shown able to
 * fail:
 *  -DCOUNTER keeps a count of holds per owner instead of a field per hold
 *     (the model still follows whose acquires a count is of): the release
 *     of a hold whose acquire never reached a master (or whose key expired
 *     there) takes the count of the owner's other hold to zero and
 *     deletes the key carrying it, even while that hold is held
 *     (property 2);
 *  -DOWNER_BLIND lets the acquire join any hash, whoever owns it: A and B
 *     hold at once (property 1);
 *  -DPLAIN_IGNORES_HASH lets the plain client's SET NX succeed on a hash,
 *     replacing it: A's hold, still counted held, is no longer carried by
 *     a quorum, and the plain client holds with it (properties 2, 1);
 *  -DDELETE_WHOLE_KEY releases a hold the plain way, deleting the whole
 *     key when the hold's field is in it: the release of one of A's holds
 *     deletes the other's field (properties 2, 3);
 *  -DLAST_HOLD_KEEPS_KEY deletes the key only when the hash is empty,
 *     forgetting the owner field (HLEN == 0 rather than <= 1): a key with
 *     no hold left stays, taken, until it expires (property 3);
 *  -DEXTEND_KEEPS_DEADLINE lets an extend leave a hold's deadline where
 *     its acquire put it: a write drops the field of a hold still held
 *     (property 2);
 *  -DQUORUM=1 (a minority suffices): two owners hold (property 1).
 */

#define M 3
#ifndef QUORUM
#define QUORUM 2 /* -DQUORUM=1, a minority, is caught by property 1 */
#endif
#ifndef EXPIRIES
#define EXPIRIES 2 /* keys that may expire, in all */
#endif

/* Whose a master's key is. */
#define NONE 0    /* no key */
#define OWNER_A 1 /* a hash with owner token A */
#define OWNER_B 2 /* a hash with owner token B */
#define PLAIN 3   /* the plain client's string */

/* The holds, each with its own value: its field in a hash (bit h). */
#define OUTER 0   /* A's first */
#define SECOND 1  /* A's next: nested, or once the outer is lost */
#define HOLD_B 2  /* B's */
#define HOLD_P 3  /* the plain client's: its value in the string */
#define BIT(h) (1 << (h))
#define OWNER_OF(h) ((h) <= SECOND -> OWNER_A : ((h) == HOLD_B -> OWNER_B : PLAIN))

/* Whether a quorum of masters carries hold h's field (M = 3 terms). */
#define QUORUM_CARRIES(h) \
    ((((fld[0] >> (h)) & 1) + ((fld[1] >> (h)) & 1) + ((fld[2] >> (h)) & 1)) >= QUORUM)

byte own[M];   /* whose each master's key is */
byte fld[M];   /* the hold fields in it (the string: bit HOLD_P) */
#ifdef COUNTER
byte cnt[M];   /* the variant's count of holds, instead of the fields */
#endif
byte live;     /* holds being acquired or held: keys carrying them stay */
byte held;     /* holds counted held by their holders */
hidden byte keep;  /* a release: the fields it must leave */
hidden byte vote;  /* an acquire: the master said yes */
/* The properties, named for spin's report of a violation. */
hidden byte one_owner_held, one_owner_carried, held_carried;
hidden byte own_field_only, gone_when_empty;

/* Properties 1 and 2 (its second half): after every step. */
inline check()
{
    /* 1: the holds counted held are of one owner ... */
    one_owner_held = ((held & (BIT(OUTER) | BIT(SECOND))) != 0) +
                     ((held & BIT(HOLD_B)) != 0) + ((held & BIT(HOLD_P)) != 0) <= 1;
    assert(one_owner_held);
    /* ... and no two owners each have a hold a quorum carries. */
    one_owner_carried = (QUORUM_CARRIES(OUTER) || QUORUM_CARRIES(SECOND)) +
                        QUORUM_CARRIES(HOLD_B) + QUORUM_CARRIES(HOLD_P) <= 1;
    assert(one_owner_carried);
    /* 2: a hold counted held is carried by a quorum. */
    held_carried = (!(held & BIT(OUTER)) || QUORUM_CARRIES(OUTER)) &&
                   (!(held & BIT(SECOND)) || QUORUM_CARRIES(SECOND)) &&
                   (!(held & BIT(HOLD_B)) || QUORUM_CARRIES(HOLD_B)) &&
                   (!(held & BIT(HOLD_P)) || QUORUM_CARRIES(HOLD_P));
    assert(held_carried)
}

/* A write of master m's hash may drop the fields of lapsed holds (those
 * past their deadline). */
inline drop_lapsed(m)
{
#ifndef COUNTER
    if
    :: fld[m] = fld[m] & live
#ifdef EXTEND_KEEPS_DEADLINE
    :: fld[m] = fld[m] & ~held /* a held hold's deadline passed: never moved on */
#endif
    :: skip
    fi
#else
    skip
#endif
}

/* Hold h's acquire on master m: the acquire script, or the plain client's
 * SET NX. vote: whether the master said yes. */
inline acquire_on(h, m)
{
    vote = 0;
    if
    :: h != HOLD_P &&
#ifndef OWNER_BLIND
       (own[m] == NONE || own[m] == OWNER_OF(h)) ->
#else
       own[m] != PLAIN ->
#endif
        if
        :: own[m] == NONE -> own[m] = OWNER_OF(h)
        :: else
        fi;
        drop_lapsed(m);
        fld[m] = fld[m] | BIT(h);
#ifdef COUNTER
        cnt[m]++;
#endif
        vote = 1
    :: h == HOLD_P &&
#ifndef PLAIN_IGNORES_HASH
       own[m] == NONE ->
#else
       own[m] != PLAIN ->
#endif
        own[m] = PLAIN;
        fld[m] = BIT(HOLD_P);
        vote = 1
    :: else
    fi;
    check()
}

/* Hold h's release on master m, the release script: a hash loses h's
 * field if there, and goes with its last hold field; a string goes when
 * it is h's value. Then properties 2 and 3. */
inline release_on(h, m)
{
    keep = fld[m] & ~BIT(h);
    if
    :: own[m] == PLAIN ->
        if
        :: fld[m] & BIT(h) -> own[m] = NONE; fld[m] = 0
        :: else
        fi
    :: own[m] == OWNER_A || own[m] == OWNER_B ->
#if defined(COUNTER)
        /* No field per hold: the owner's count goes down, whichever hold
         * this is. */
        if
        :: own[m] == OWNER_OF(h) ->
            cnt[m]--;
            fld[m] = keep;
            if
            :: cnt[m] == 0 -> own[m] = NONE; fld[m] = 0
            :: else
            fi
        :: else
        fi
#elif defined(DELETE_WHOLE_KEY)
        if
        :: fld[m] & BIT(h) -> own[m] = NONE; fld[m] = 0
        :: else
        fi
#else
        if
        :: fld[m] & BIT(h) ->
            fld[m] = keep;
            drop_lapsed(m);
#ifndef LAST_HOLD_KEEPS_KEY
            if
            :: fld[m] == 0 -> own[m] = NONE
            :: else
            fi
#endif
        :: else
        fi
#endif
    :: else
    fi;
    /* 2: the other live holds' fields are all still there ... */
    own_field_only = (fld[m] & ~BIT(h) & live) == (keep & live);
    assert(own_field_only);
    /* 3: ... and the key is gone when no hold field is left, only then. */
    gone_when_empty = (own[m] == NONE) == (fld[m] == 0);
    assert(gone_when_empty);
    check()
}

/* Master m's key expires, whole: never one carrying a hold being acquired
 * or held. n: the expiries so far (the expiry process's). */
inline expire(m)
{
    own[m] = NONE;
    fld[m] = 0;
#ifdef COUNTER
    cnt[m] = 0;
#endif
    n++;
    check()
}

active proctype expiry()
{
    byte n; /* expiries so far */

    do
    :: atomic { n < EXPIRIES && own[0] != NONE && (fld[0] & live) == 0 -> expire(0) }
    :: atomic { n < EXPIRIES && own[1] != NONE && (fld[1] & live) == 0 -> expire(1) }
    :: atomic { n < EXPIRIES && own[2] != NONE && (fld[2] & live) == 0 -> expire(2) }
    :: break
    od
}

/* One hold, from its acquire to its release. */
proctype hold(byte h)
{
    byte sent;     /* masters its acquire has reached, or never will (bit m) */
    byte yes;      /* votes counted */
    byte released; /* masters its release has reached, or never will */

    /* ACQUIRE: each master's request, in any order: applied, or lost.
     * Then decided. */
    do
    :: atomic { !(sent & 1) -> acquire_on(h, 0); sent = sent | 1; yes = yes + vote }
    :: atomic { !(sent & 2) -> acquire_on(h, 1); sent = sent | 2; yes = yes + vote }
    :: atomic { !(sent & 4) -> acquire_on(h, 2); sent = sent | 4; yes = yes + vote }
    :: atomic { !(sent & 1) -> sent = sent | 1 }
    :: atomic { !(sent & 2) -> sent = sent | 2 }
    :: atomic { !(sent & 4) -> sent = sent | 4 }
    :: atomic { sent == 7 ->
        if
        :: yes >= QUORUM -> held = held | BIT(h)
        :: true -> live = live & ~BIT(h) /* no quorum, or no validity left */
        fi;
        sent = 0; yes = 0; /* spent: states that differ only here are one */
        check();
        break }
    od;

    /* HELD, until released or lapsed; then the release: each master's
     * request, in any order, applied or lost. */
    do
    :: atomic { held & BIT(h) -> held = held & ~BIT(h); live = live & ~BIT(h); check() }
    :: atomic { !(held & BIT(h)) && !(released & 1) -> release_on(h, 0); released = released | 1 }
    :: atomic { !(held & BIT(h)) && !(released & 2) -> release_on(h, 1); released = released | 2 }
    :: atomic { !(held & BIT(h)) && !(released & 4) -> release_on(h, 2); released = released | 4 }
    :: atomic { !(held & BIT(h)) && !(released & 1) -> released = released | 1 }
    :: atomic { !(held & BIT(h)) && !(released & 2) -> released = released | 2 }
    :: atomic { !(held & BIT(h)) && !(released & 4) -> released = released | 4 }
    :: atomic { released == 7 -> released = 0; break }
    od
}

init
{
    atomic {
        live = BIT(OUTER) | BIT(SECOND) | BIT(HOLD_B) | BIT(HOLD_P);
        run hold(OUTER);
        run hold(SECOND);
        if
        :: run hold(HOLD_B)
        :: run hold(HOLD_P)
        fi
    }
}
