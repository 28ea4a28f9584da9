/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Preloaded into a test master before libfaketime (fleet.h, "Fake
 * clocks"). Debian's redis-server allocates with jemalloc, and under
 * libfaketime alone it hangs before main(): jemalloc's initialisation
 * reads the clock, libfaketime's wrapper then resolves the real function
 * with dlsym(), which allocates, and that waits on jemalloc's
 * initialisation lock. Here the allocator is glibc's from the first call
 * on, and the jemalloc extensions redis-server calls answer as a build
 * without them would: mallctl() knows no name, nallocx() rounds nothing,
 * malloc_stats_print() prints nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* glibc's own allocator under its exported internal names. */
// NOLINTBEGIN(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);
// NOLINTEND(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)

void *malloc(size_t size)
{
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    return __libc_realloc(p, size);
}

void free(void *p)
{
    __libc_free(p);
}

void *memalign(size_t align, size_t size)
{
    return __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
    return __libc_memalign(align, size);
}

void *valloc(size_t size)
{
    return __libc_valloc(size);
}

void *pvalloc(size_t size)
{
    return __libc_pvalloc(size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    if (align < sizeof(void *) || (align & (align - 1)) != 0)
        return EINVAL;
    void *p = __libc_memalign(align, size);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

/* glibc has no __libc_ name for it: its own, from libc itself (jemalloc's
 * comes first in the search order of RTLD_NEXT). */
size_t malloc_usable_size(void *p)
{
    static size_t (*glibc)(void *);
    if (glibc == NULL) {
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        if (libc != NULL)
            *(void **)&glibc = dlsym(libc, "malloc_usable_size");
    }
    return glibc != NULL && p != NULL ? glibc(p) : 0;
}

/* jemalloc's signature, kept as it is. Statistics and counters read as 0,
 * commands (epoch, purge) succeed doing nothing: Valkey asserts that its
 * statistics can be read. Strings (version, opt.*) are unknown, never a
 * NULL pointer written where a caller expects one to print. */
int mallctl(const char *name, void *oldp, size_t *oldlenp, // NOLINT(readability-non-const-parameter)
            void *newp, size_t newlen)
{
    (void)newp, (void)newlen;
    if (name == NULL || strcmp(name, "version") == 0 || strncmp(name, "opt.", 4) == 0 ||
        strstr(name, ".dss") != NULL)
        return ENOENT;
    if (oldp != NULL && oldlenp != NULL)
        memset(oldp, 0, *oldlenp);
    return 0;
}

/* jemalloc's non-standard API, which newer servers call directly (Valkey 8
 * and 9: sdallocx; Redis 8: mallocx, rallocx, dallocx): glibc's allocator
 * behind it too, or memory from glibc would reach jemalloc. The flags'
 * low six bits are log2 of an alignment (MALLOCX_LG_ALIGN), 0x40 asks for
 * zeroed memory (MALLOCX_ZERO); the arena and tcache bits mean nothing
 * here. */
#define SHIM_MALLOCX_ALIGN(flags) ((size_t)1 << ((unsigned)(flags) & 0x3fU))
#define SHIM_MALLOCX_ZERO 0x40

static void *shim_alloc(size_t size, int flags)
{
    void *p = (flags & 0x3f) != 0 ? __libc_memalign(SHIM_MALLOCX_ALIGN(flags), size)
                                  : __libc_malloc(size);
    if (p != NULL && (flags & SHIM_MALLOCX_ZERO) != 0)
        memset(p, 0, size);
    return p;
}

void *mallocx(size_t size, int flags)
{
    return shim_alloc(size == 0 ? 1 : size, flags);
}

void *rallocx(void *p, size_t size, int flags)
{
    if ((flags & (0x3f | SHIM_MALLOCX_ZERO)) == 0)
        return __libc_realloc(p, size);
    /* Aligned or zeroed: a new block, the old contents copied over. */
    size_t old = malloc_usable_size(p);
    void *q = shim_alloc(size == 0 ? 1 : size, flags);
    if (q == NULL)
        return NULL;
    memcpy(q, p, old < size ? old : size);
    __libc_free(p);
    return q;
}

void sdallocx(void *p, size_t size, int flags)
{
    (void)size, (void)flags;
    __libc_free(p);
}

void dallocx(void *p, int flags)
{
    (void)flags;
    __libc_free(p);
}

size_t nallocx(size_t size, int flags)
{
    (void)flags;
    return size;
}

void malloc_stats_print(void (*write_cb)(void *, const char *), void *arg, const char *opts)
{
    (void)write_cb, (void)arg, (void)opts;
}
