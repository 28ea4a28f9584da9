/* SPDX-License-Identifier: BSD-3-Clause */
/* Results. A callback's result is a view into the round and the config,
 * built on the stack: no allocation. A kept result (redlock_result_copy)
 * is one allocation holding the header, the per-master array and every
 * string, so it can be freed as a unit. */
#include "lock/result.h"
#include "context/context.h"
#include "master/clock_probe.h"
#include "master/master.h"
#include "redlock/redlock.h"
#include "round/quorum.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static size_t text_size(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

/* Copy len bytes and a NUL into the block at *cursor, or NULL for NULL. */
static const char *pack_bytes(char **cursor, const char *s, size_t len)
{
    if (s == NULL)
        return NULL;
    char *dst = memcpy(*cursor, s, len);
    dst[len] = '\0';
    *cursor += len + 1;
    return dst;
}

static const char *pack_text(char **cursor, const char *s)
{
    return pack_bytes(cursor, s, s ? strlen(s) : 0);
}

/* A self-contained copy of header + masters (whose strings may live
 * anywhere). */
static redlock_result *result_pack(const redlock_result *header,
                                   const redlock_master_result *masters)
{
    size_t n = header->master_count;
    size_t size = sizeof(redlock_result) + n * sizeof(redlock_master_result);
    for (size_t i = 0; i < n; i++)
        size += text_size(masters[i].name) + text_size(masters[i].detail) +
                text_size(masters[i].server) +
                (masters[i].value ? masters[i].value_len + 1 : 0);
    redlock_result *out = malloc(size);
    if (out == NULL)
        return NULL;
    *out = *header;
    redlock_master_result *dst = (redlock_master_result *)(out + 1);
    char *cursor = (char *)(dst + n);
    for (size_t i = 0; i < n; i++) {
        dst[i] = masters[i];
        dst[i].name = pack_text(&cursor, masters[i].name);
        dst[i].detail = pack_text(&cursor, masters[i].detail);
        dst[i].server = pack_text(&cursor, masters[i].server);
        dst[i].value = pack_bytes(&cursor, masters[i].value, masters[i].value_len);
    }
    out->masters = n ? dst : NULL;
    return out;
}

/* The header fields that need no per-master detail. */
static void result_header(redlock_result *out, const redlock_client *client,
                          const rl_result_info *info)
{
    memset(out, 0, sizeof(*out));
    out->status = info->status;
    out->validity_ms = info->validity_ms;
    out->total_ms = info->total_us / 1000;
    out->attempts = info->attempts;
    out->masters_locked = info->masters_locked;
    out->quorum = client->quorum;
    out->fencing_token = info->fencing_token;
    const rl_round *round = info->round;
    if (round != NULL) {
        int64_t end = info->end_us != 0 ? info->end_us
                      : round->decided ? round->decided_us : rl_now_us();
        out->elapsed_us = end - round->t0_us;
        out->elapsed_ms = out->elapsed_us / 1000;
    }
}

void rl_result_view(redlock_result *out, redlock_master_result *masters,
                    const redlock_client *client, const rl_result_info *info)
{
    result_header(out, client, info);
    out->master_count = (unsigned)client->n;
    out->masters = masters;
    const rl_round *round = info->round;
    for (size_t i = 0; i < client->n; i++) {
        redlock_master_result *m = &masters[i];
        *m = (redlock_master_result){.name = client->cfg->nodes[i].name,
                                     .outcome = REDLOCK_MASTER_PENDING,
                                     .latency_us = -1,
                                     .pttl_ms = -2};
        rl_clock_probe_report(&client->masters[i], &m->clock_state, &m->clock_slow,
                              &m->clock_rate_lo, &m->clock_rate_hi);
        const char *server = client->masters[i].server.text;
        m->server = server[0] != '\0' ? server : NULL;
        if (round != NULL && round->slots[i].counted) {
            const rl_slot *slot = &round->slots[i];
            m->outcome = slot->outcome;
            m->detail = slot->detail;
            m->latency_us = slot->latency_us;
            m->value = slot->value;
            m->value_len = slot->value_len;
            m->pttl_ms = slot->pttl_ms;
            if (round->kind == RL_ROUND_INSPECT && slot->counter > 0)
                m->fencing_token = (uint64_t)slot->counter;
            m->late = slot->state == RL_SLOT_LATE;
        }
    }
}

int redlock_result_copy(const redlock_result *result, redlock_result **out)
{
    if (out == NULL)
        return REDLOCK_EINVAL;
    *out = NULL;
    if (result == NULL || (result->master_count > 0 && result->masters == NULL))
        return REDLOCK_EINVAL;
    *out = result_pack(result, result->masters);
    return *out ? REDLOCK_OK : REDLOCK_ENOMEM;
}

void redlock_result_free(redlock_result *result)
{
    free(result);
}
