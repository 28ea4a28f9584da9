/* SPDX-License-Identifier: BSD-3-Clause */
/* Counts the process's heap allocations and live bytes, for "allocations
 * per lock pair" and "no heap growth": malloc and friends are replaced by
 * wrappers around glibc's own (glibc supports replacing malloc this way;
 * every library in the process then allocates through these). */
#include "bench.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

/* glibc's own allocator, under the names it exports for exactly this. */
// NOLINTBEGIN(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t size);
// NOLINTEND(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)

static atomic_ulong allocations;
static atomic_long live_bytes;

static void counted(void *p)
{
    if (p != NULL) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&live_bytes, (long)malloc_usable_size(p), memory_order_relaxed);
    }
}

void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    counted(p);
    return p;
}

void *calloc(size_t n, size_t size)
{
    void *p = __libc_calloc(n, size);
    counted(p);
    return p;
}

void *realloc(void *old, size_t size)
{
    long before = old ? (long)malloc_usable_size(old) : 0;
    void *p = __libc_realloc(old, size);
    if (p != NULL || size == 0) {
        atomic_fetch_sub_explicit(&live_bytes, before, memory_order_relaxed);
        counted(p);
    }
    return p;
}

void free(void *p)
{
    if (p != NULL)
        atomic_fetch_sub_explicit(&live_bytes, (long)malloc_usable_size(p), memory_order_relaxed);
    __libc_free(p);
}

void *aligned_alloc(size_t align, size_t size)
{
    void *p = __libc_memalign(align, size);
    counted(p);
    return p;
}

int posix_memalign(void **out, size_t align, size_t size)
{
    void *p = __libc_memalign(align, size);
    if (p == NULL)
        return 12; /* ENOMEM */
    counted(p);
    *out = p;
    return 0;
}

unsigned long bench_allocations(void)
{
    return atomic_load_explicit(&allocations, memory_order_relaxed);
}

long bench_live_bytes(void)
{
    return atomic_load_explicit(&live_bytes, memory_order_relaxed);
}
