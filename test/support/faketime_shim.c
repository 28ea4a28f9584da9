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

/* jemalloc's signature, kept as it is. */
int mallctl(const char *name, void *oldp, size_t *oldlenp, // NOLINT(readability-non-const-parameter)
            void *newp, size_t newlen)
{
    (void)name, (void)oldp, (void)oldlenp, (void)newp, (void)newlen;
    return ENOENT;
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
