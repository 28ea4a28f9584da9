/* SPDX-License-Identifier: BSD-3-Clause */
/* The failover suite's fault injector; see injector.h. */
#include "injector.h"
#include "failover_log.h"

#include <signal.h>

/* Time between two faults, and how long a stopped master stays stopped. */
#define FAULT_GAP_MIN_MS 300
#define FAULT_GAP_MAX_MS 1500
#define STOP_MIN_MS 200
#define STOP_MAX_MS 2500
#define QUICK_RESTART_MAX_MS 300

/* splitmix64: small, seedable, good enough to pick faults. */
static uint64_t next_random(injector *inj)
{
    uint64_t z = (inj->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int64_t random_between(injector *inj, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(next_random(inj) % (uint64_t)(hi - lo + 1));
}

unsigned injector_available(const injector *inj)
{
    unsigned up = 0;
    for (size_t i = 0; i < inj->n; i++)
        up += !inj->masters[i].down && !inj->masters[i].paused;
    return up;
}

/* Restarted lately, and not counted by the clients yet. */
static bool excluded(const injector *inj, size_t i)
{
    return inj->masters[i].excluded_until_ns != 0;
}

unsigned injector_counted(const injector *inj)
{
    unsigned up = 0;
    for (size_t i = 0; i < inj->n; i++)
        up += !inj->masters[i].down && !inj->masters[i].paused && !inj->fast[i] &&
              !excluded(inj, i);
    return up;
}

static void log_fault(injector *inj, const char *kind, size_t master)
{
    int64_t now = tc_now_ns();
    flog_write(inj->log, "F %lld %s %zu", (long long)now, kind, master);
    flog_write(inj->log, "U %lld %u", (long long)now, injector_counted(inj));
}

void injector_init(injector *inj, fleet *f, int log, uint64_t seed, bool unsafe,
                   const bool *aof, const bool *fast, int64_t longest_ttl_ms)
{
    *inj = (injector){.fleet = f, .log = log, .rng = seed, .unsafe = unsafe, .aof = aof,
                      .wait_for_seeding = true,
                      .fast = fast, .n = fleet_size(f)};
    /* "Longest TTL" plus the drift allowance and a margin for slow
     * machines: every key the master forgot would have expired by then. */
    inj->delayed_restart_ns = (longest_ttl_ms + longest_ttl_ms / 50 + 500) * 1000000;
    inj->next_fault_ns = tc_now_ns() + FAULT_GAP_MAX_MS * 1000000LL;
    flog_write(log, "U %lld %u", (long long)tc_now_ns(), injector_counted(inj));
}

/* A master that is up, chosen at random, or -1. */
static long pick_available(injector *inj)
{
    long candidates[FLEET_MAX_SERVERS];
    size_t count = 0;
    for (size_t i = 0; i < inj->n; i++)
        if (!inj->masters[i].down && !inj->masters[i].paused)
            candidates[count++] = (long)i;
    return count ? candidates[next_random(inj) % count] : -1;
}

static void bring_back(injector *inj, size_t i)
{
    injector_master *m = &inj->masters[i];
    if (m->paused) {
        fleet_resume(inj->fleet, i);
        m->paused = false;
        log_fault(inj, "cont", i);
    } else if (m->down) {
        if (fleet_restart(inj->fleet, i) == 0) {
            m->down = false;
            m->seeding = true; /* a new run: its fencing counter is not in use */
            /* Not durable to the clients: a new run they leave out. */
            if (inj->exclusion_ns > 0 && !inj->aof[i])
                m->excluded_until_ns = tc_now_ns() + inj->exclusion_ns;
            log_fault(inj, "restart", i);
        } else {
            m->back_at_ns = tc_now_ns() + 100000000; /* try again shortly */
        }
    }
}

static void kill_master(injector *inj, size_t i, int64_t now)
{
    injector_master *m = &inj->masters[i];
    fleet_kill(inj->fleet, i);
    m->down = true;
    /* Persistence decides when it may come back (see injector.h). */
    bool at_once = inj->unsafe || inj->aof[i];
    if (inj->no_delay && !inj->aof[i])
        m->back_at_ns = now; /* back on the next tick, empty */
    else
        m->back_at_ns = now + (at_once ? random_between(inj, 0, QUICK_RESTART_MAX_MS) * 1000000
                                       : inj->delayed_restart_ns);
    const char *kind = inj->aof[i]              ? "kill-aof"
                       : !inj->unsafe            ? "kill-delayed"
                       : inj->exclusion_ns > 0   ? "kill-empty" /* the rule on */
                                                 : "kill-unsafe";
    log_fault(inj, kind, i);
}

static void stop_master(injector *inj, size_t i, int64_t now)
{
    injector_master *m = &inj->masters[i];
    fleet_pause(inj->fleet, i);
    m->paused = true;
    m->back_at_ns = now + random_between(inj, STOP_MIN_MS, STOP_MAX_MS) * 1000000;
    log_fault(inj, "stop", i);
}

pid_t injector_tick(injector *inj, int64_t now, pid_t holder)
{
    for (size_t i = 0; i < inj->n; i++) {
        injector_master *m = &inj->masters[i];
        if ((m->down || m->paused) && now >= m->back_at_ns)
            bring_back(inj, i);
        if (excluded(inj, i) && now >= m->excluded_until_ns) {
            m->excluded_until_ns = 0;
            flog_write(inj->log, "U %lld %u", (long long)now, injector_counted(inj));
        }
    }
    if (now < inj->next_fault_ns)
        return 0;
    inj->next_fault_ns = now + random_between(inj, FAULT_GAP_MIN_MS, FAULT_GAP_MAX_MS) * 1000000;

    /* A restarted master is back in service once the clients seeded its
     * fencing counter again (docs/fencing.md): unless told otherwise
     * (--aof), faults wait for that, as an operator restarting masters one
     * at a time would, so that seeding from the others, which needs no
     * clock, is what puts the counters back in use. */
    unsigned seeding = 0;
    for (size_t i = 0; i < inj->n; i++) {
        injector_master *m = &inj->masters[i];
        if (m->seeding && !m->down && fleet_fencing_counter(inj->fleet, i) >= 0)
            m->seeding = false;
        seeding += ((inj->wait_for_seeding && m->seeding) || excluded(inj, i)) && !m->down &&
                   !m->paused;
    }
    unsigned unavailable = (unsigned)inj->n - injector_available(inj) + seeding;
    unsigned roll = (unsigned)(next_random(inj) % 100);
    if (roll < 20 && holder > 0) {
        kill(holder, SIGKILL);
        flog_write(inj->log, "K %lld %ld", (long long)tc_now_ns(), (long)holder);
        return holder;
    }
    if (unavailable >= INJECTOR_MAX_UNAVAILABLE)
        return 0; /* keep a majority up: this fault waits for the next turn */
    long victim = pick_available(inj);
    if (victim < 0)
        return 0;
    if (roll < 60)
        kill_master(inj, (size_t)victim, now);
    else
        stop_master(inj, (size_t)victim, now);
    return 0;
}

void injector_heal(injector *inj)
{
    for (size_t i = 0; i < inj->n; i++)
        bring_back(inj, i);
}
