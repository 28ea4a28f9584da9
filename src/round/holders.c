/* SPDX-License-Identifier: BSD-3-Clause */
/* Which masters hold a lock's keys (holders.h). */
#include "round/holders.h"

#include <stdlib.h>

rl_holders *rl_holders_new(void)
{
    rl_holders *h = malloc(sizeof(*h));
    if (h == NULL)
        return NULL;
    atomic_init(&h->refs, 1);
    atomic_init(&h->masters, 0);
    return h;
}

void rl_holders_ref(rl_holders *h)
{
    atomic_fetch_add(&h->refs, 1);
}

void rl_holders_unref(rl_holders *h)
{
    if (h != NULL && atomic_fetch_sub(&h->refs, 1) == 1)
        free(h);
}

void rl_holders_add(rl_holders *h, size_t i)
{
    if (h != NULL && i < 64)
        atomic_fetch_or(&h->masters, UINT64_C(1) << i);
}

uint64_t rl_holders_get(const rl_holders *h)
{
    return h != NULL ? atomic_load(&((rl_holders *)h)->masters) : 0;
}
