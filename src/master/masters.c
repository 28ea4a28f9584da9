/* SPDX-License-Identifier: BSD-3-Clause */
/* The client's masters taken together. See masters.h. */
#include "master/masters.h"
#include "master/clock_probe.h"
#include "master/master.h"
#include "master/restart.h"
#include "context/context.h"
#include "redlock/redlock.h"
#include "util/util.h"

bool rl_masters_behind(const redlock_client *client)
{
    int64_t now = rl_now_us();
    size_t behind = 0;
    for (size_t i = 0; i < client->n; i++)
        if (rl_master_behind(&client->masters[i], now))
            behind++;
    return client->n - behind < client->quorum;
}

int64_t rl_masters_clock_wait(const redlock_client *client, int64_t now_us, int64_t started_us)
{
    if (rl_client_setting(client, REDLOCK_CLOCK_WARMUP_MS) == 0)
        return 0; /* no warm-up asked */
    int64_t limit = started_us +
                    (rl_client_setting(client, REDLOCK_CONNECT_TIMEOUT_MS) +
                     rl_client_setting(client, REDLOCK_CLOCK_WARMUP_MS)) * 1000 +
                    4 * RL_PROBE_MIN_GAP_US;
    if (now_us >= limit)
        return 0;
    /* Every connected master checked; one still connecting is waited for
     * only while too few are checked to make a quorum without it. */
    unsigned warm = 0;
    unsigned warming = 0;
    unsigned connecting = 0;
    for (size_t i = 0; i < client->n; i++) {
        switch (rl_clock_probe_warmth(&client->masters[i])) {
        case RL_PROBE_WARM:
            warm++;
            break;
        case RL_PROBE_WARMING:
            warming++;
            break;
        case RL_PROBE_CONNECTING:
            connecting++;
            break;
        default:
            break;
        }
    }
    if (warming == 0 && (connecting == 0 || warm >= client->quorum))
        return 0;
    int64_t at = now_us + RL_PROBE_MIN_GAP_US;
    return at < limit ? at : limit;
}

int64_t rl_masters_restart_wait(const redlock_client *client, int64_t now_us)
{
    int64_t at[REDLOCK_MAX_NODES] = {0}; /* the first k filled in */
    size_t k = 0;
    for (size_t i = 0; i < client->n && k < REDLOCK_MAX_NODES; i++) {
        const rl_master *m = &client->masters[i];
        if (m->state != RL_MASTER_READY && m->state != RL_MASTER_CONNECTING)
            continue;
        int64_t t = now_us + rl_restart_wait_ms(m, now_us) * 1000;
        size_t j = k++; /* sorted as they come: at most a few dozen */
        for (; j > 0 && at[j - 1] > t; j--)
            at[j] = at[j - 1];
        at[j] = t;
    }
    if (k < client->quorum || at[client->quorum - 1] <= now_us)
        return 0;
    return at[client->quorum - 1];
}
