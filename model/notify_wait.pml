/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waiting for a lock by notification (docs/design.md, "Waiting by
 * notification"): the specification the code follows.
 *
 * M masters, C clients. Each client acquires the lock once: it attempts
 * (SET NX on every master, in any order, interleaved with everyone else),
 * holds it on a majority, or else deletes what it got and waits. A delete
 * by the release script publishes on the master's channel for the
 * resource; every client subscribed there is woken. Keys never expire here,
 * so a waiter only ever waits for a release or a cleanup.
 *
 * The rules checked. A client remembers, per master, whether a delete was
 * announced to it there since its attempt began. It attempts again as soon
 * as those announcements, with the masters that did not refuse it, could
 * make a quorum: a delete on a master that said yes frees nothing it
 * needs, and one delete among several holders' keys frees too little.
 * A new subscription counts as an announcement, since a delete just before
 * it was not heard. It waits for announcements alone only while it is
 * subscribed on every master that refused it (held the key); otherwise its
 * retry timer stays armed. Subscribing takes a round trip that may fail
 * (the subscriber connection is down); losing the connection loses the
 * messages in flight, which the client sees as its subscription gone.
 *
 * The library keeps the retry timer armed in every wait all the same: a
 * key that expires publishes nothing, and a message can be lost in ways
 * not shown here. What the model shows is that while its subscriptions
 * hold, a waiter is never woken by the timer alone: no notification it
 * needs can be missed.
 *
 * Checked (scripts/check-model.sh):
 *  - safety: never two holders (assertion);
 *  - no lost wake-up: with the timer used only where the rules say, no
 *    client is left waiting forever (no invalid end state).
 * Each check is shown able to fail: -DQUORUM=1 (a minority suffices)
 * breaks the assertion, and three tempting shortcuts are each caught by
 * spin as a waiter left waiting: -DSUBSCRIBE_AFTER_ATTEMPT takes a new
 * subscription for no announcement (a release just before it is never
 * heard of); -DCOVERAGE_CHECKED_ONCE decides whether the timer is needed
 * on entering the wait only (a subscription lost while waiting leaves the
 * waiter deaf); -DFORGET_AT_WAIT forgets the announcements on entering
 * the wait rather than when the attempt begins (a release during the
 * attempt, after the master refused, is lost).
 *
 * -DSCRIPT_FREE_RELEASE: a release without the script, for masters that
 * have a compare-and-delete command (DELIFEQ, DELEX: docs/servers.md).
 * The delete and the announcement are two steps: the compare-and-delete,
 * then a PUBLISH written behind it, whatever it did (the library
 * pipelines the two), with anyone's steps in between (another client may
 * take the key before the announcement goes out). Both properties hold.
 * So they do with -DANNOUNCE_IF_DELETED, the PUBLISH sent only once the
 * delete's reply says it deleted: the announcement is then a round trip
 * later, which is why the library does not wait. A releaser that dies
 * between the two leaves its delete unannounced, as a holder that dies
 * leaves its key to expire: keys never expire here, and the library's
 * retry timer covers both. A compare-and-delete alone, leaving waiters to
 * the timer (-DSCRIPT_FREE_RELEASE -DNO_ANNOUNCE), is caught as a waiter
 * left waiting.
 */

#define M 3
#ifndef C
#define C 2 /* 3 exceeds 4 GB of states: see scripts/check-model.sh */
#endif
#ifndef QUORUM
#define QUORUM 2 /* -DQUORUM=1, a minority, is caught by the assertion */
#endif
#define NONE 255

/* Announcements and masters that said yes could make a quorum for c (M =
 * 3 terms): worth an attempt at once. */
#define ENOUGH(c) \
    (((!refused[0] || notified[(c) * M + 0]) + \
      (!refused[1] || notified[(c) * M + 1]) + \
      (!refused[2] || notified[(c) * M + 2])) >= QUORUM)

/* A master that refused client c in its last attempt and where c is not
 * subscribed (M = 3 terms). */
#define UNCOVERED(c) \
    ((refused[0] && !subscribed[(c) * M + 0]) || \
     (refused[1] && !subscribed[(c) * M + 1]) || \
     (refused[2] && !subscribed[(c) * M + 2]))

byte key[M];           /* holder of each master's key, or NONE */
bool subscribed[C * M]; /* client c on master m: subscribed[c * M + m] */
bool notified[C * M];  /* a delete announced to c on m since c's attempt began */
byte holders;           /* clients that hold the lock now */
hidden byte scan;       /* a loop's index, not part of the state */

/* A PUBLISH on master m's channel for the resource. Delivery to each
 * subscriber either happens or breaks that subscriber's connection. */
inline announce(m)
{
    for (scan : 0 .. C - 1) {
        if
        :: subscribed[scan * M + m] -> notified[scan * M + m] = true
        :: subscribed[scan * M + m] -> subscribed[scan * M + m] = false
        :: else -> skip
        fi
    }
    scan = 0
}

/* The release on master m, for client c. The script: compare-and-delete,
 * and the announcement when it deleted, in one atomic step. */
inline release_on(c, m)
{
#if defined(SCRIPT_FREE_RELEASE)
    /* The compare-and-delete, then the PUBLISH (or, ANNOUNCE_IF_DELETED:
     * its reply, then a PUBLISH if it deleted). */
    deleted = false;
    atomic {
        if
        :: key[m] == c -> key[m] = NONE; deleted = true
        :: else -> skip
        fi
    }
#ifndef NO_ANNOUNCE
#ifdef ANNOUNCE_IF_DELETED
    if
    :: deleted -> atomic { announce(m) }
    :: else -> skip
    fi;
#else
    atomic { announce(m) };
#endif
#endif
    deleted = false
#else
    atomic {
        if
        :: key[m] == c -> key[m] = NONE; announce(m)
        :: else -> skip
        fi
    }
#endif
}

proctype client(byte c)
{
    byte m, got;
    bool fresh;
    bool deleted;      /* a script-free release's delete, until announced */
    bool refused[M];   /* masters that held the key in the last attempt */

attempt:
#ifndef FORGET_AT_WAIT
    for (m : 0 .. M - 1) { notified[c * M + m] = false }
#endif
    got = 0;
    for (m : 0 .. M - 1) {
        atomic {
            if
            :: key[m] == NONE -> key[m] = c; got++; refused[m] = false
            :: else -> refused[m] = true
            fi
        }
    }
    m = 0;
    if
    :: got >= QUORUM ->
        atomic { holders++; assert(holders == 1) }
        atomic { holders-- }
        for (m : 0 .. M - 1) { release_on(c, m) }
        m = 0;
        goto done
    :: else
    fi;
    /* Not acquired: delete what this attempt got. */
    got = 0;
    for (m : 0 .. M - 1) { release_on(c, m) }
    m = 0;

    /* Subscribe where not yet subscribed; each may fail. One step: the
     * attempt that follows sees whatever happened meanwhile. A new
     * subscription covers only later deletes: it counts as an
     * announcement. */
    atomic {
        for (m : 0 .. M - 1) {
            if
            :: !subscribed[c * M + m] ->
                if
                :: subscribed[c * M + m] = true;
#ifndef SUBSCRIBE_AFTER_ATTEMPT
                   notified[c * M + m] = true
#else
                   skip
#endif
                :: skip /* the subscriber connection is down */
                fi
            :: else
            fi
        }
        m = 0
    }
#ifdef FORGET_AT_WAIT
    for (m : 0 .. M - 1) { notified[c * M + m] = false }
    m = 0;
#endif

    /* Wait: for announcements alone while subscribed on every master
     * that refused us; once one of those subscriptions is gone (now or
     * later: its connection dropped), for the retry timer too. */
#ifndef COVERAGE_CHECKED_ONCE
    if
    :: ENOUGH(c) -> goto attempt
    :: UNCOVERED(c) -> goto attempt
    fi;
#else
    fresh = UNCOVERED(c); /* decided once, on entering the wait */
    if
    :: ENOUGH(c) -> fresh = false; goto attempt
    :: fresh -> fresh = false; goto attempt
    fi;
#endif

done:
    skip
}

init
{
    byte i;
    for (i : 0 .. M - 1) { key[i] = NONE }
    atomic {
        for (i : 0 .. C - 1) { run client(i) }
    }
}
