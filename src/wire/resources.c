/* SPDX-License-Identifier: BSD-3-Clause */
/* A lock's resources, one or a sorted set. See resources.h. */
#include "wire/resources.h"
#include "redlock/redlock.h"
#include "wire/scripts.h"
#include "util/message_buffer.h"

#include <stdlib.h>
#include <string.h>

#define RL_KEY_HEADER 4 /* a set's length prefix per resource */

static bool begins_with(const void *resource, size_t len, const char *prefix)
{
    size_t prefix_len = strlen(prefix);
    return len >= prefix_len && memcmp(resource, prefix, prefix_len) == 0;
}

/* The fencing counter's key, the tokens' keys and the restart marker's
 * keys are the library's own, never a lock's. */
bool rl_resource_valid(const void *resource, size_t len)
{
    return resource != NULL && len > 0 && len <= REDLOCK_MAX_RESOURCE_LEN &&
           !(len == sizeof(REDLOCK_FENCING_KEY) - 1 &&
             memcmp(resource, REDLOCK_FENCING_KEY, len) == 0) &&
           !begins_with(resource, len, REDLOCK_FENCING_TOKEN_PREFIX) &&
           !begins_with(resource, len, RL_RESTART_KEY_PREFIX);
}

rl_keys rl_keys_one(const void *resource, size_t len)
{
    return (rl_keys){.count = 1, .len = len, .data = resource};
}

/* Bytewise order, a prefix before what it begins. */
static int key_compare(const char *a, size_t a_len, const char *b, size_t b_len)
{
    int c = memcmp(a, b, a_len < b_len ? a_len : b_len);
    if (c != 0)
        return c;
    return a_len < b_len ? -1 : a_len > b_len ? 1 : 0;
}

typedef struct key_ref {
    const char *p;
    size_t len;
} key_ref;

static int key_ref_compare(const void *a, const void *b)
{
    const key_ref *x = a;
    const key_ref *y = b;
    return key_compare(x->p, x->len, y->p, y->len);
}

/* refs: the resources, sorted. */
static void sort_refs(key_ref refs[REDLOCK_MAX_RESOURCES], const void *const *resources,
                      const size_t *lens, size_t count)
{
    for (size_t i = 0; i < count; i++)
        refs[i] = (key_ref){resources[i], lens[i]};
    qsort(refs, count, sizeof(refs[0]), key_ref_compare);
}

int rl_keys_check(const void *const *resources, const size_t *lens, size_t count,
                  size_t *block_len)
{
    if (resources == NULL || lens == NULL || count == 0 || count > REDLOCK_MAX_RESOURCES)
        return REDLOCK_EINVAL;
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        if (!rl_resource_valid(resources[i], lens[i]))
            return REDLOCK_EINVAL;
        total += lens[i];
        if (total > REDLOCK_MAX_RESOURCE_LEN)
            return REDLOCK_EINVAL;
    }
    *block_len = total;
    if (count == 1)
        return REDLOCK_OK; /* the common case: nothing to sort */
    key_ref refs[REDLOCK_MAX_RESOURCES] = {{0}};
    sort_refs(refs, resources, lens, count);
    for (size_t i = 1; i < count; i++)
        if (key_ref_compare(&refs[i - 1], &refs[i]) == 0)
            return REDLOCK_EINVAL; /* named twice */
    *block_len = total + count * RL_KEY_HEADER;
    return REDLOCK_OK;
}

void rl_keys_store(rl_keys *out, char *block, const void *const *resources, const size_t *lens,
                   size_t count)
{
    if (count == 1) {
        memcpy(block, resources[0], lens[0]);
        *out = rl_keys_one(block, lens[0]);
        return;
    }
    key_ref refs[REDLOCK_MAX_RESOURCES] = {{0}};
    sort_refs(refs, resources, lens, count);
    char *w = block;
    for (size_t i = 0; i < count; i++) {
        uint32_t n = (uint32_t)refs[i].len;
        w[0] = (char)(n >> 24);
        w[1] = (char)(n >> 16);
        w[2] = (char)(n >> 8);
        w[3] = (char)n;
        w += RL_KEY_HEADER;
        memcpy(w, refs[i].p, refs[i].len);
        w += refs[i].len;
    }
    *out = (rl_keys){.count = count, .len = (size_t)(w - block), .data = block};
}

bool rl_keys_next(const rl_keys *keys, size_t *pos, const char **resource, size_t *len)
{
    if (*pos >= keys->len)
        return false;
    if (keys->count == 1) {
        *resource = keys->data;
        *len = keys->len;
        *pos = keys->len;
        return true;
    }
    const unsigned char *h = (const unsigned char *)keys->data + *pos;
    size_t n = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | (size_t)h[3];
    *resource = keys->data + *pos + RL_KEY_HEADER;
    *len = n;
    *pos += RL_KEY_HEADER + n;
    return true;
}

const char *rl_keys_at(const rl_keys *keys, size_t i, size_t *len)
{
    size_t pos = 0;
    const char *resource = NULL;
    size_t n = 0;
    for (size_t k = 0; k <= i; k++)
        if (!rl_keys_next(keys, &pos, &resource, &n))
            return NULL;
    *len = n;
    return resource;
}

const char *rl_keys_describe(const rl_keys *keys, char buf[RL_KEYS_DESCRIBED])
{
    rl_msg_buf msg;
    rl_msg_init(&msg, buf, RL_KEYS_DESCRIBED);
    size_t len = 0;
    const char *first = rl_keys_at(keys, 0, &len);
    if (first != NULL)
        rl_msg_escaped(&msg, first, len, 64);
    if (keys->count > 1)
        rl_msg_printf(&msg, " (and %zu more)", keys->count - 1);
    return buf;
}
