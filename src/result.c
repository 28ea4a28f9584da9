/* Results: one allocation holding the header, the per-master array and
 * every string, so a result can be kept, copied and freed as a unit. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static size_t text_size(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

/* Copy a text into the block at *cursor, or NULL for NULL. */
static const char *pack_text(char **cursor, const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *dst = memcpy(*cursor, s, n);
    *cursor += n;
    return dst;
}

/* A self-contained copy of header + masters (whose strings may live
 * anywhere). */
static redlock_result *result_pack(const redlock_result *header,
                                   const redlock_master_result *masters)
{
    size_t n = header->master_count;
    size_t size = sizeof(redlock_result) + n * sizeof(redlock_master_result);
    for (size_t i = 0; i < n; i++)
        size += text_size(masters[i].name) + text_size(masters[i].detail);
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
    const rl_round *round = info->round;
    if (round != NULL) {
        int64_t end = round->decided ? round->decided_us : rl_now_us();
        out->elapsed_us = end - round->t0_us;
        out->elapsed_ms = out->elapsed_us / 1000;
    }
}

redlock_result *rl_result_build(const redlock_client *client, const rl_result_info *info,
                                redlock_result *fallback)
{
    redlock_result header;
    result_header(&header, client, info);
    header.master_count = (unsigned)client->n;
    const rl_round *round = info->round;
    redlock_master_result masters[REDLOCK_MAX_NODES];
    for (size_t i = 0; i < client->n; i++) {
        redlock_master_result *m = &masters[i];
        m->name = client->cfg->nodes[i].name;
        m->outcome = REDLOCK_MASTER_PENDING;
        m->detail = NULL;
        m->latency_us = -1;
        if (round != NULL && round->slots[i].counted) {
            m->outcome = round->slots[i].outcome;
            m->detail = round->slots[i].detail;
            m->latency_us = round->slots[i].latency_us;
        }
    }
    redlock_result *result = result_pack(&header, masters);
    if (result != NULL)
        return result;
    result_header(fallback, client, info); /* master_count 0: no detail */
    return fallback;
}

void rl_result_discard(redlock_result *result, const redlock_result *fallback)
{
    if (result != fallback)
        redlock_result_free(result);
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
