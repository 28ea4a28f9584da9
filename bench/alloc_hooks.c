/* SPDX-License-Identifier: BSD-3-Clause */
/* Counts the process's heap allocations and live bytes under AddressSanitizer
 * or ThreadSanitizer, whose allocators replace malloc themselves (so
 * alloc_count.c cannot): through the sanitizer runtime's allocation hooks.
 * GCC ships no header for them; their declarations are stable. */
#include "bench.h"

#include <stdatomic.h>
#include <stddef.h>

void __sanitizer_install_malloc_and_free_hooks(void (*on_malloc)(const volatile void *, size_t),
                                               void (*on_free)(const volatile void *));
size_t __sanitizer_get_allocated_size(const volatile void *p);

static atomic_ulong allocations;
static atomic_long live_bytes;

static void on_malloc(const volatile void *p, size_t size)
{
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&live_bytes, (long)size, memory_order_relaxed);
    (void)p;
}

/* Called before the block is freed: its size is still known. */
static void on_free(const volatile void *p)
{
    atomic_fetch_sub_explicit(&live_bytes, (long)__sanitizer_get_allocated_size(p),
                              memory_order_relaxed);
}

__attribute__((constructor)) static void install_hooks(void)
{
    __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}

unsigned long bench_allocations(void)
{
    return atomic_load_explicit(&allocations, memory_order_relaxed);
}

long bench_live_bytes(void)
{
    return atomic_load_explicit(&live_bytes, memory_order_relaxed);
}
