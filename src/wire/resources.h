/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The resources a lock is for: one, or a set of up to REDLOCK_MAX_RESOURCES
 * taken all or nothing. A set is kept sorted (bytewise, then shorter first)
 * and without duplicates, so that two clients asking for {a,b} and {b,a}
 * send the same request and neither can hold a part the other needs.
 *
 * Stored as one block of bytes: a single resource as it is, a set as its
 * resources one after another, each after its length in 4 bytes (big
 * endian). rl_keys is a view of such a block; whoever keeps one copies
 * data (len bytes) and count.
 */
#ifndef REDLOCK_RESOURCES_H
#define REDLOCK_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rl_keys {
    size_t count;     /* 1..REDLOCK_MAX_RESOURCES */
    size_t len;       /* bytes of data */
    const char *data; /* see above */
} rl_keys;

/* Whether resource may be locked: neither empty nor too long, nor one of
 * the library's own keys. Shared by the asynchronous and blocking entry
 * points. */
bool rl_resource_valid(const void *resource, size_t len);
/* A view of one resource. */
rl_keys rl_keys_one(const void *resource, size_t len);

/*
 * Check count resources (resources[i], lens[i]) and the size of their
 * block: REDLOCK_OK, or REDLOCK_EINVAL for NULL arrays, a count outside
 * 1..REDLOCK_MAX_RESOURCES, a resource rl_resource_valid() refuses, more
 * than REDLOCK_MAX_RESOURCE_LEN bytes in all, or a resource named twice.
 */
int rl_keys_check(const void *const *resources, const size_t *lens, size_t count,
                  size_t *block_len);
/* Write the block of resources checked by rl_keys_check() into block
 * (block_len bytes), sorted; *out views it. */
void rl_keys_store(rl_keys *out, char *block, const void *const *resources, const size_t *lens,
                   size_t count);

/* The resources in order: *pos starts at 0; false after the last. */
bool rl_keys_next(const rl_keys *keys, size_t *pos, const char **resource, size_t *len);
/* The i-th resource (i < count); NULL otherwise. */
const char *rl_keys_at(const rl_keys *keys, size_t i, size_t *len);

/* Room for rl_keys_describe(). */
#define RL_KEYS_DESCRIBED 128
/* The resources for a log line: the first, escaped and cut short, and how
 * many more ("a (and 2 more)"). Returns buf. */
const char *rl_keys_describe(const rl_keys *keys, char buf[RL_KEYS_DESCRIBED]);

#endif
